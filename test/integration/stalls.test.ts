// Processes stall rather than die on a busy cluster (a long GC pause, CPU starvation, a VM migration): each part
// of the stack is frozen with SIGSTOP mid-run, past the timeout that notices it, and resumed with SIGCONT. After
// each, Temporal's status of every workflow, the results a client gets (`ratchet run`'s summary and exit status,
// or RolloutClient's) and the rows in Postgres must tell the same story, every trajectory exactly once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { freePort } from '../../src/stack/free-port.js';
import type { TrajectoryTimeouts } from '../../src/trajectory/timeouts.js';
import { agreementOf, allCompleted, type Agreement } from './agreement.js';
import { SAMPLE, startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';
import { pauseFor, resumeAllPaused } from '../../scripts/support/paused-process.js';
import { startRatchet, stopRatchets, waitForLine, waitUntilPolling, type RatchetProcess } from '../../scripts/support/ratchet-process.js';

// Past Temporal's default workflow task timeout (10 s): the task a frozen CPU worker holds is retried meanwhile.
const PAST_WORKFLOW_TASK_TIMEOUT_MS = 12_500;
// Past the generate heartbeat timeout the requests ask for: a frozen turn is retried meanwhile.
const HEARTBEAT_TIMEOUT_S = 3;
const PAST_HEARTBEAT_TIMEOUT_MS = 6_000;
const TIMEOUTS: TrajectoryTimeouts = { generateHeartbeatSeconds: HEARTBEAT_TIMEOUT_S };

let stack: TestStack;
let rollouts: RolloutClient;
let stopController: (() => Promise<void>) | undefined;
const processes: RatchetProcess[] = [];
const parts = {} as Record<'policy' | 'cpu' | 'gpu', RatchetProcess>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  stack = await startTestStack();
  env = {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    DATABASE_URL: stack.databaseUrl,
    LOG_LEVEL: 'warn',
    RATCHET_HEARTBEAT_INTERVAL_MS: '500',
    RATCHET_VERIFIER_THREADS: '1',
    RATCHET_GPU_SLOTS: '32',
  };
  // ~150-token answers at 300 tokens/s: a turn streams for about half a second, so a pause finds some mid-stream.
  parts.policy = started(['sim-policy', '--dataset', SAMPLE, '--port', String(await freePort()), '--seed', '21', '--tokens-per-second', '300']);
  env.RATCHET_POLICY_URL = (await waitForLine(parts.policy.child, /simulated policy at (\S+)/))[1]!;
  parts.cpu = started(['worker', 'cpu']);
  parts.gpu = started(['worker', 'gpu']);
  await Promise.all([waitUntilPolling(stack.client, parts.cpu.child, 'cpu'), waitUntilPolling(stack.client, parts.gpu.child, 'gpu')]);
  stopController = await stack.startController();
  rollouts = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
});

// A stall test that fails says what the frozen processes said: their last warnings and errors.
afterEach(({ task }) => {
  if (task.result?.state !== 'fail') return;
  for (const [name, part] of Object.entries(parts))
    console.error(`--- ${name} (pid ${part.child.pid}, exit ${part.child.exitCode ?? part.child.signalCode ?? 'none'}) stderr ---\n${part.stderr()}`);
});

afterAll(async () => {
  resumeAllPaused();
  await stopController?.();
  await stopRatchets(processes);
  await stack?.stop();
});

function started(args: string[]): RatchetProcess {
  const ratchet = startRatchet(args, env);
  processes.push(ratchet);
  return ratchet;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function storedRows(prefix: string): Promise<number> {
  const {
    rows: [row],
  } = await stack.pool.query<{ n: string }>('SELECT count(*) AS n FROM trajectories WHERE trajectory_id LIKE $1', [`${prefix}/%`]);
  return Number(row!.n);
}

async function generationsInFlight(): Promise<number> {
  const stats = await fetch(`${env.RATCHET_POLICY_URL}/ratchet/stats`).then((response) => response.json() as Promise<{ inFlight: number }>);
  return stats.inFlight;
}

/**
 * `ratchet run --submit-only` against the running stack: the workers are the processes this file freezes. `finished`
 * waits for it at most `waitMs`: a trajectory that never ends shows as RUNNING instead of timing the test out.
 */
function ratchetRun(runName: string, limit: number, samples: number, turns: number) {
  const ids = trajectoryRequests(runName, stack.problems.slice(0, limit), samples, { turns }).map((request) => request.trajectoryId);
  const run = started([
    'run',
    '--dataset',
    SAMPLE,
    '--limit',
    String(limit),
    '--samples',
    String(samples),
    '--turns',
    String(turns),
    '--run-name',
    runName,
    '--submit-only',
  ]);
  const finished = async (waitMs = 60_000): Promise<Agreement & { ratchetRun: { exit: number | string; summary: string | undefined } }> => {
    const exit = await Promise.race([run.exited, delay(waitMs).then(() => `still running after ${waitMs} ms`)]);
    const summary = /^trajectories .*$/m.exec(run.stdout())?.[0];
    return { ...(await agreementOf(stack.client, ids, await stack.exported(`${runName}/`, { includeFailed: true }))), ratchetRun: { exit, summary } };
  };
  return { ids, finished };
}

/** Trajectories submitted as groups through RolloutClient (admitted by the controller), with short heartbeats. */
async function submitGroups(runId: string, problems: number, samples: number, turns: number) {
  const run = { runId, maxHeadOffpolicyness: 100, batchSize: problems, maxConcurrent: problems };
  const groups = await rollouts.submit(run, stack.problems.slice(0, problems), { samples, rollout: { turns }, timeouts: TIMEOUTS });
  const ids = groups.flatMap((group) => group.trajectoryIds);
  const finished = async (waitMs = 60_000): Promise<Agreement> => {
    const results = await Promise.race([rollouts.wait(groups), delay(waitMs).then(() => undefined)]);
    return agreementOf(stack.client, ids, await stack.exported(`${runId}/`, { includeFailed: true }), results);
  };
  return { ids, finished };
}

/** What the trajectories' histories show of a stall: workflow tasks that timed out, and generate attempts past the first. */
async function stallMarks(ids: readonly string[]): Promise<{ workflowTaskTimeouts: number; generateRetries: number }> {
  const marks = { workflowTaskTimeouts: 0, generateRetries: 0 };
  await Promise.all(
    ids.map(async (id) => {
      for (const event of (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? []) {
        if (event.workflowTaskTimedOutEventAttributes) marks.workflowTaskTimeouts++;
        // A retried activity's started event is written when it ends, with its attempt; with no failure, generate is the only one.
        if ((event.activityTaskStartedEventAttributes?.attempt ?? 1) > 1) marks.generateRetries++;
      }
    }),
  );
  return marks;
}

const stillRunning = (part: RatchetProcess) => part.child.exitCode === null && part.child.signalCode === null;

const ranClean = (n: number) => ({ ...allCompleted(n), ratchetRun: { exit: 0, summary: `trajectories      ${n} (${n} completed, 0 failed)` } });

describe('a process frozen mid-run (SIGSTOP past its timeout, then SIGCONT)', () => {
  it(
    'a CPU worker frozen past the workflow task timeout as trajectories finish: none fails, and Temporal, ratchet run and Postgres agree',
    { timeout: 240_000 },
    async () => {
      // One-turn trajectories finish all the time, so each freeze lands while some are storing their result: the
      // retried workflow task then runs their last steps again after the row exists and the working rows are gone.
      const run = ratchetRun('stall-cpu', 40, 3, 1);
      for (const rows of [10, 50]) {
        await until(async () => (await storedRows('stall-cpu')) >= rows, 60_000);
        await pauseFor(parts.cpu.child.pid!, PAST_WORKFLOW_TASK_TIMEOUT_MS);
      }
      const finished = await run.finished();
      // A worker frozen mid-activation once woke to the SDK's deadlock detector and aborted (cpu-worker.ts).
      expect(stillRunning(parts.cpu)).toBe(true);
      expect(finished).toEqual(ranClean(120));
      expect((await stallMarks(run.ids)).workflowTaskTimeouts).toBeGreaterThan(0);
    },
  );

  it(
    'a GPU worker frozen past the generate heartbeat timeout: its turns are retried and every trajectory completes once',
    { timeout: 120_000 },
    async () => {
      const run = await submitGroups('stall-gpu', 8, 4, 3);
      await until(async () => (await generationsInFlight()) >= 4, 30_000);
      await pauseFor(parts.gpu.child.pid!, PAST_HEARTBEAT_TIMEOUT_MS);
      expect(await run.finished()).toEqual(allCompleted(32));
      expect(stillRunning(parts.gpu)).toBe(true);
      expect((await stallMarks(run.ids)).generateRetries).toBeGreaterThan(0);
    },
  );

  it(
    'the policy server frozen past the generate heartbeat timeout: its turns are retried and every trajectory completes once',
    { timeout: 120_000 },
    async () => {
      const run = await submitGroups('stall-policy', 8, 4, 3);
      await until(async () => (await generationsInFlight()) >= 4, 30_000);
      await pauseFor(parts.policy.child.pid!, PAST_HEARTBEAT_TIMEOUT_MS);
      expect(await run.finished()).toEqual(allCompleted(32));
      expect((await stallMarks(run.ids)).generateRetries).toBeGreaterThan(0);
    },
  );

  it('the Temporal server frozen past the workflow task and heartbeat timeouts: every trajectory completes once', { timeout: 150_000 }, async () => {
    const run = await submitGroups('stall-temporal', 10, 4, 2);
    await until(async () => (await storedRows('stall-temporal')) >= 4, 60_000);
    await pauseFor(stack.pids.temporal!, PAST_WORKFLOW_TASK_TIMEOUT_MS);
    expect(await run.finished()).toEqual(allCompleted(40));
  });

  it(
    'Postgres (postmaster and backends) frozen past the workflow task timeout: none fails, and ratchet run agrees',
    { timeout: 150_000 },
    async () => {
      const run = ratchetRun('stall-postgres', 20, 2, 2);
      await until(async () => (await storedRows('stall-postgres')) >= 4, 60_000);
      await pauseFor(stack.pids.postgres!, PAST_WORKFLOW_TASK_TIMEOUT_MS);
      expect(await run.finished()).toEqual(ranClean(40));
    },
  );
});

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { loadConfig } from '../../src/config.js';
import { loadDataset, type Problem } from '../../src/datasets/index.js';
import { PYTHON_PACKAGE_DIR, pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { stopChild } from '../../src/stack/child-process.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import type { TrajectoryRequest } from '../../src/trajectory/request.js';
import { expectEnvironmentInvariants, storedSteps } from './environment-rows.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { servePythonEnvironment } from './python-environment-worker.js';

const EventType = temporal.api.enums.v1.EventType;
const REPO = path.resolve(import.meta.dirname, '../..');
const GUESS_NUMBER = path.join(REPO, 'examples/environments/guess_number.py');
const FIXTURES = path.join(PYTHON_PACKAGE_DIR, 'tests/environment_fixtures.py');
const GUESS_DATA = path.join(REPO, 'data/guess-number-sample.jsonl');

let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;
let python: string;
let guessProblems: Problem[];
const workers = new Set<ChildProcess>();

/** `ratchet-env serve SPEC` as a child process, resolved once Temporal has seen it poll (python-environment-worker.ts). */
function serveEnvironment(spec: string): Promise<ChildProcess> {
  return servePythonEnvironment(stack, python, spec, (child) => {
    workers.add(child);
    child.once('exit', () => workers.delete(child));
  });
}

async function stopEnvironment(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await stopChild(child, { signal });
}

beforeAll(async () => {
  python = await pythonPackageEnv(loadConfig().stateDir);
  ({ problems: guessProblems } = await loadDataset(GUESS_DATA));
  stack = await startTestStack({ seed: 17 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController();
}, 600_000);

afterAll(async () => {
  for (const child of [...workers]) await stopEnvironment(child, 'SIGKILL');
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

function requests(
  run: string,
  problems: readonly Problem[],
  samples: number,
  extra: Partial<Problem> = {},
  timeouts?: TrajectoryRequest['timeouts'],
): TrajectoryRequest[] {
  return problems.flatMap((problem) =>
    Array.from({ length: samples }, (_, sample) =>
      trajectoryRequest(
        { ...problem, ...extra },
        {
          trajectoryId: trajectoryId(run, problem.qid, sample),
          options: { turns: 6 },
          ...(timeouts ? { timeouts } : {}),
        },
      ),
    ),
  );
}

/** Every row of a guess-number run: the invariants, tool observations, and the game's rewards and ending. */
async function expectGuessRows(rows: ExportedTrajectory[]): Promise<void> {
  for (const row of rows) {
    const steps = await storedSteps(stack.pool, row.trajectory_id);
    expectEnvironmentInvariants(row, stack.tokenizer, steps);
    for (const [t, { verdict, step }] of steps.entries()) {
      expect(step!.observations).toEqual([{ role: 'tool', content: { correct: 'Correct!', too_low: 'Too low.', too_high: 'Too high.' }[verdict] }]);
      expect(step!.reward).toBe(verdict === 'correct' ? 1 : 0);
      expect(step!.done).toBe(verdict === 'correct');
      expect(step!.info).toEqual({ guesses: t + 1 });
      // The row's success is the environment's own answer, whatever its verdict's label.
      expect(row.successes[t]).toBe(step!.success);
    }
    expect(row.end_reason).toBe(steps.at(-1)!.verdict === 'correct' ? 'done' : 'turns');
  }
  const { rows: stored } = await stack.pool.query('SELECT DISTINCT environment FROM trajectories WHERE trajectory_id = ANY($1)', [
    rows.map((r) => r.trajectory_id),
  ]);
  expect(stored).toEqual([{ environment: rows[0]!.trajectory_id.includes('slow') ? 'slow-guess' : 'guess-number' }]);
}

function ms(time: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** Mean time from one turn's generation completing to the next turn's generation being scheduled (the step between). */
async function stepGapMs(ids: readonly string[]): Promise<{ mean: number; gaps: number }> {
  const gaps: number[] = [];
  for (const id of ids) {
    const events = (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const generates = new Set(
      events
        .filter(
          (e) =>
            e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.activityType?.name === 'generate',
        )
        .map((e) => Number(e.eventId)),
    );
    let completedAt: number | undefined;
    for (const event of events) {
      if (
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
        generates.has(Number(event.activityTaskCompletedEventAttributes?.scheduledEventId))
      )
        completedAt = ms(event.eventTime);
      if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && generates.has(Number(event.eventId)) && completedAt !== undefined) {
        gaps.push(ms(event.eventTime) - completedAt);
        completedAt = undefined;
      }
    }
  }
  return { mean: gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length), gaps: gaps.length };
}

describe('a Python environment served by `ratchet-env serve` on the real stack', () => {
  it(
    "plays guess-the-number through RolloutClient and `ratchet run`; every row keeps the game's observations and rewards",
    { timeout: 300_000 },
    async () => {
      const worker = await serveEnvironment(`${GUESS_NUMBER}:GuessNumber`);
      try {
        // Through the TypeScript client's training-run path: 4 groups of 2.
        const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
        const run = { runId: 'guess-client', maxHeadOffpolicyness: 1000, batchSize: 4, maxConcurrent: 4 };
        const grouped = await client.wait(await client.submit(run, guessProblems, { samples: 2, rollout: { turns: 6 } }));
        expect(grouped.map((r) => r.status)).toEqual(Array(8).fill('completed'));

        // Through the CLI, from source, against this stack: the file's own environment, and --environment over it.
        const cli = await runCliFromSource(['run', '--dataset', GUESS_DATA, '--submit-only', '--run-name', 'guess-cli', '--turns', '6']);
        expect(cli.code, cli.stderr).toBe(0);
        expect(cli.stdout).toMatch(/trajectories\s+4 \(4 completed, 0 failed\)/);

        const direct = await runRollouts(stack.client, requests('guess-direct', guessProblems, 1));
        expect(direct.map((r) => r.status)).toEqual(Array(4).fill('completed'));

        for (const prefix of ['guess-client/', 'guess-cli/', 'guess-direct/']) {
          const rows = await stack.exported(prefix, { includeFailed: true });
          expect(rows.map((r) => r.status)).toEqual(Array(prefix === 'guess-client/' ? 8 : 4).fill('completed'));
          await expectGuessRows(rows);
        }
        const all = await stack.exported('guess-');
        expect(all).toHaveLength(16);
        // A range of 20 is searched in at most 5 guesses by halving; the simulated player halves half the time.
        expect(all.filter((r) => r.end_reason === 'done').length).toBeGreaterThan(8);

        // What a remote step costs per turn against the built-in math environment's local step, in the same stack.
        const math = await runRollouts(
          stack.client,
          stack.problems
            .slice(0, 6)
            .map((problem) => trajectoryRequest(problem, { trajectoryId: trajectoryId('local-math', problem.qid, 0), options: { turns: 5 } })),
        );
        expect(math.map((r) => r.status)).toEqual(Array(6).fill('completed'));
        const remote = await stepGapMs(all.map((r) => r.trajectory_id));
        const local = await stepGapMs(math.map((r) => r.trajectoryId));
        console.log(
          `remote step: ${remote.mean.toFixed(1)} ms/turn, local step: ${local.mean.toFixed(1)} ms/turn (generate end to next generate scheduled; ${remote.gaps} and ${local.gaps} turns)`,
        );
      } finally {
        await stopEnvironment(worker);
      }
    },
  );

  it('finishes every trajectory exactly once when one of two environment workers is SIGKILLed mid-step', { timeout: 300_000 }, async () => {
    const first = await serveEnvironment(`${FIXTURES}:SlowGuessNumber`);
    const second = await serveEnvironment(`${FIXTURES}:SlowGuessNumber`);
    try {
      const problems = guessProblems.map((p) => ({ ...p, environment: 'slow-guess', environmentArgs: { ...p.environmentArgs, delay_s: 1.5 } }));
      const submitted = requests('slow-kill', problems, 3, {}, { environmentHeartbeatSeconds: 4 });
      const running = runRollouts(stack.client, submitted);
      // Killed while it runs a step: Temporal shows the step started on it and pending.
      await pollUntil(
        async () => {
          let running = 0;
          for (const { trajectoryId: id } of submitted) {
            const { raw } = await stack.client.workflow
              .getHandle(id)
              .describe()
              .catch(() => ({ raw: { pendingActivities: [] } }));
            running += (raw.pendingActivities ?? []).filter(
              (a) =>
                a.activityType?.name === 'environmentStep' &&
                a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED &&
                a.lastWorkerIdentity?.startsWith(`${first.pid}@`),
            ).length;
          }
          return running;
        },
        { what: 'a step running on the first worker', timeoutMs: 60_000, intervalMs: 50, done: (n) => n >= 2 },
      );
      await stopEnvironment(first, 'SIGKILL');
      const results = await running;
      expect(results.map((r) => r.status)).toEqual(Array(12).fill('completed'));

      const rows = await stack.exported('slow-kill/', { includeFailed: true });
      expect(rows).toHaveLength(12);
      await expectGuessRows(rows);
      const { rows: counts } = await stack.pool.query(
        "SELECT (SELECT count(*)::int FROM trajectories WHERE trajectory_id LIKE 'slow-kill/%') AS trajectories, " +
          "(SELECT count(*)::int FROM turn_texts WHERE trajectory_id LIKE 'slow-kill/%') AS turns, " +
          "(SELECT count(DISTINCT (trajectory_id, turn))::int FROM turn_texts WHERE trajectory_id LIKE 'slow-kill/%') AS distinct_turns, " +
          "(SELECT count(*)::int FROM turn_outputs WHERE trajectory_id LIKE 'slow-kill/%') AS leftovers",
      );
      expect(counts[0]).toEqual({
        trajectories: 12,
        turns: rows.reduce((n, r) => n + r.seqlens.length, 0),
        distinct_turns: rows.reduce((n, r) => n + r.seqlens.length, 0),
        leftovers: 0,
      });

      // Temporal's histories: the killed worker's steps were retried, and the retries ran on the other worker.
      const retried: { attempt: number; identity: string }[] = [];
      for (const { trajectoryId: id } of results) {
        const events = (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
        const steps = new Set(
          events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'environmentStep').map((e) => Number(e.eventId)),
        );
        for (const event of events) {
          const started = event.activityTaskStartedEventAttributes;
          if (started && steps.has(Number(started.scheduledEventId)) && (started.attempt ?? 1) > 1)
            retried.push({ attempt: started.attempt!, identity: started.identity ?? '' });
        }
      }
      expect(retried.length).toBeGreaterThan(0);
      for (const { identity } of retried) expect(identity.startsWith(`${second.pid}@`), identity).toBe(true);
    } finally {
      await stopEnvironment(first, 'SIGKILL');
      await stopEnvironment(second);
    }
  });

  it(
    'fails a trajectory typed: EnvironmentFailure(data) at once, an unhandled exception as infrastructure after retries; never a zero reward',
    { timeout: 120_000 },
    async () => {
      const worker = await serveEnvironment(`${FIXTURES}:FailingGame`);
      try {
        const problem = { ...guessProblems[0]!, environment: 'failing-game' };
        const results = await runRollouts(stack.client, [
          trajectoryRequest({ ...problem, environmentArgs: { mode: 'data' } }, { trajectoryId: 'failing/data', options: { turns: 2 } }),
          trajectoryRequest({ ...problem, environmentArgs: { mode: 'crash' } }, { trajectoryId: 'failing/crash', options: { turns: 2 } }),
        ]);
        expect(results.map(({ status, failureType, failureClass }) => ({ status, failureType, failureClass }))).toEqual([
          { status: 'failed', failureType: 'EnvironmentDataError', failureClass: 'data' },
          { status: 'failed', failureType: 'EnvironmentError', failureClass: 'infrastructure' },
        ]);
        const rows = (await stack.exported('failing/', { includeFailed: true })).sort((a, b) => a.trajectory_id.localeCompare(b.trajectory_id));
        expect(
          rows.map(({ trajectory_id, status, failure_type, failure_class, rewards, raw_rewards }) => ({
            trajectory_id,
            status,
            failure_type,
            failure_class,
            rewards,
            raw_rewards,
          })),
        ).toEqual(
          [
            {
              trajectory_id: 'failing/data',
              status: 'failed',
              failure_type: 'EnvironmentDataError',
              failure_class: 'data',
              rewards: [],
              raw_rewards: [],
            },
            {
              trajectory_id: 'failing/crash',
              status: 'failed',
              failure_type: 'EnvironmentError',
              failure_class: 'infrastructure',
              rewards: [],
              raw_rewards: [],
            },
          ].reverse(),
        );
        expect(rows.find((r) => r.trajectory_id === 'failing/crash')!.error).toMatch(/FailingGame\.step raised RuntimeError: the game crashed/);
        // The crash was retried (the workflow's bound: 5 attempts); the data failure was not.
        const attempts = async (id: string) => {
          const events = (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
          return Math.max(
            ...events
              .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
              .map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 1),
          );
        };
        expect(await attempts('failing/data')).toBe(1);
        expect(await attempts('failing/crash')).toBe(5);
      } finally {
        await stopEnvironment(worker);
      }
    },
  );
});

/** `ratchet …` run from source (vite-node) against this stack, as a user runs it with TEMPORAL_ADDRESS and DATABASE_URL. */
function runCliFromSource(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(path.join(REPO, 'node_modules/.bin/vite-node'), [path.join(REPO, 'src/cli/main.ts'), ...args], {
    cwd: REPO,
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ratchet ${args.join(' ')} ran past 180 s: ${stderr}`));
    }, 180_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The Temporal server users deploy (src/stack/temporal-server.ts: Postgres, SQL visibility, four history shards),
// killed and frozen mid-run, and its Postgres killed mid-run. After each, Temporal's status of every workflow,
// the results a client gets and the rows in Ratchet's Postgres must agree, every trajectory exactly once.
// Runs in `npm run test:temporal-server`, which starts the real server for every stack (RATCHET_TEST_TEMPORAL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { agreementOf, allCompleted, type Agreement } from '../integration/agreement.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { descendantsOf, pauseFor, resumeAllPaused } from '../../scripts/support/paused-process.js';
import { until } from '../integration/until.js';

// Past Temporal's default workflow task timeout (10 s) and the generate heartbeat timeout asked for below.
const PAST_WORKFLOW_TASK_TIMEOUT_MS = 12_500;

let stack: TestStack;
let rollouts: RolloutClient;
let stopWorkers: () => Promise<void>;
let stopController: () => Promise<void>;

beforeAll(async () => {
  if (process.env.RATCHET_TEST_TEMPORAL !== 'server')
    throw new Error('run this file with `npm run test:temporal-server` (it needs the real Temporal server)');
  // ~150-token answers at 300 tokens/s: a run of 40 trajectories takes a few seconds, so a fault lands mid-run.
  stack = await startTestStack({ tokensPerSecond: 300, seed: 28 });
  stopWorkers = await stack.startWorkers({ heartbeatIntervalMs: 500 });
  stopController = await stack.startController();
  rollouts = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
});

afterAll(async () => {
  resumeAllPaused();
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function storedRows(runId: string): Promise<number> {
  const {
    rows: [row],
  } = await stack.pool.query<{ n: string }>('SELECT count(*) AS n FROM trajectories WHERE run_id = $1', [runId]);
  return Number(row!.n);
}

/** Groups submitted through RolloutClient (admitted by the controller), waited for at most `waitMs`. */
async function submitGroups(runId: string, problems: number, samples: number) {
  const run = { runId, maxHeadOffpolicyness: 100, batchSize: problems, maxConcurrent: problems };
  const groups = await rollouts.submit(run, stack.problems.slice(0, problems), {
    samples,
    rollout: { turns: 2 },
    timeouts: { generateHeartbeatSeconds: 3 },
  });
  const ids = groups.flatMap((group) => group.trajectoryIds);
  const finished = async (waitMs = 120_000): Promise<Agreement> => {
    const results = await Promise.race([rollouts.wait(groups), delay(waitMs).then(() => undefined)]);
    return agreementOf(stack.client, ids, await stack.exported(`${runId}/`, { includeFailed: true }), results);
  };
  return { ids, finished };
}

/** SIGKILLs a process and waits until it and every process under it are gone (Postgres's backends outlive it briefly). */
async function killTree(pid: number): Promise<void> {
  const tree = [pid, ...(await descendantsOf(pid))];
  process.kill(pid, 'SIGKILL');
  await until(
    () =>
      tree.every((p) => {
        try {
          process.kill(p, 0);
          return false;
        } catch {
          return true;
        }
      }),
    30_000,
  );
}

describe('the Temporal server users deploy, under faults mid-run', () => {
  it(
    'the server SIGKILLed mid-run and started again: every trajectory completes once, and Temporal and Postgres agree',
    { timeout: 240_000 },
    async () => {
      const run = await submitGroups('kill-temporal', 10, 4);
      await until(async () => (await storedRows('kill-temporal')) >= 4, 60_000);
      await killTree(stack.temporal.pid!);
      await delay(3_000);
      await stack.temporal.restart!();
      expect(await run.finished()).toEqual(allCompleted(40));
    },
  );

  it('the server frozen past the workflow task and heartbeat timeouts: every trajectory completes once', { timeout: 240_000 }, async () => {
    const run = await submitGroups('stall-temporal', 10, 4);
    await until(async () => (await storedRows('stall-temporal')) >= 4, 60_000);
    await pauseFor(stack.temporal.pid!, PAST_WORKFLOW_TASK_TIMEOUT_MS);
    expect(await run.finished()).toEqual(allCompleted(40));
  });

  it("the server's Postgres SIGKILLed mid-run and started again: every trajectory completes once", { timeout: 240_000 }, async () => {
    const run = await submitGroups('kill-temporal-db', 10, 4);
    await until(async () => (await storedRows('kill-temporal-db')) >= 4, 60_000);
    await killTree(stack.temporal.postgres!.pid!);
    await delay(3_000);
    await stack.temporal.restartPostgres!();
    expect(await run.finished()).toEqual(allCompleted(40));
  });

  it("the server's Postgres frozen past the workflow task timeout: every trajectory completes once", { timeout: 240_000 }, async () => {
    const run = await submitGroups('stall-temporal-db', 10, 4);
    await until(async () => (await storedRows('stall-temporal-db')) >= 4, 60_000);
    await pauseFor(stack.temporal.postgres!.pid!, PAST_WORKFLOW_TASK_TIMEOUT_MS);
    expect(await run.finished()).toEqual(allCompleted(40));
  });
});

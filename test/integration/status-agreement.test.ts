import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { StatusAgreementSweep } from '../../src/processes/status-agreement-sweep.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { startMetricsServer, type RunningMetrics } from '../../src/metrics/metrics-server.js';
import { freePort } from '../../src/stack/free-port.js';
import { startRatchetUi, type RunningUi } from '../../src/ui/server.js';
import { runCli } from '../cli/run-cli.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;
let ui: RunningUi | undefined;
let metrics: RunningMetrics | undefined;

beforeAll(async () => {
  // Turns of a few seconds: one trajectory is still running when the operator terminates it.
  stack = await startTestStack({ tokensPerSecond: 100, reasoningTokens: 400, seed: 17 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController({ sweepMs: 300 });
  ui = await startRatchetUi({ pool: stack.pool, tokenizer: stack.tokenizer, port: 0, temporal: { client: stack.client, namespace: 'default' } });
  metrics = await startMetricsServer({ address: '127.0.0.1:0', pool: stack.pool });
});

afterAll(async () => {
  await metrics?.close();
  await ui?.close();
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

const rowStatus = async (trajectoryId: string) =>
  (await stack.pool.query<{ status: string }>('SELECT status FROM trajectories WHERE trajectory_id = $1', [trajectoryId])).rows[0]?.status;
const recorded = async () =>
  (await stack.pool.query<{ trajectory_id: string; kind: string }>('SELECT trajectory_id, kind FROM status_disagreements ORDER BY kind')).rows;
const runsStatus = async (temporalAddress: string) =>
  runCli(['runs', 'status', 'agree'], { DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: temporalAddress });
const trajectoryPage = async (id: string) => (await fetch(`${ui!.url}/trajectories/${encodeURIComponent(id)}`)).text();

describe("Temporal's status beside the row's", () => {
  let ids: string[] = [];
  let terminated = '';

  it('agrees over a run with a trajectory terminated from outside, once the sweep has recorded its row', { timeout: 120_000 }, async () => {
    const run: RunConfig = { runId: 'agree', maxHeadOffpolicyness: 8, batchSize: 1, maxConcurrent: 8 };
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    ids = (await client.submit(run, stack.problems.slice(0, 3), { samples: 2, rollout: { turns: 1 } })).flatMap((group) => group.trajectoryIds);
    terminated = ids[0]!;
    await until(async () => (await stack.pool.query('SELECT 1 FROM turn_checkpoints WHERE trajectory_id = $1', [terminated])).rowCount! > 0, 60_000);
    await stack.client.workflow.getHandle(terminated).terminate('an operator stopped it');
    for (const id of ids) await until(async () => (await rowStatus(id)) !== undefined, 90_000);
    expect(await rowStatus(terminated)).toBe('failed');

    const result = await runsStatus(stack.temporalAddress);
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    // Postgres's counters are still there, with Temporal's beside them.
    expect(status).toMatchObject({ runId: 'agree', accepted: 3, failures: { failed: 1, byType: { WorkflowClosed: 1 } } });
    expect(status.temporal).toEqual({
      reachable: true,
      workflows: { Running: 0, Completed: 5, Failed: 0, Terminated: 1, TimedOut: 0, Canceled: 0 },
      disagreements: 0,
      disagreeing: [],
    });
    const page = await trajectoryPage(ids[1]!);
    expect(page).toContain('id="workflow-status">Completed<');
    expect(page).not.toContain('status-disagreement');
    expect(await trajectoryPage(terminated)).toContain('id="workflow-status">Terminated<');
    expect(await recorded()).toEqual([]);
  });

  it("counts rows changed behind Temporal's back: in the sweep, the metric, `runs status` and the UI", { timeout: 120_000 }, async () => {
    const [, failedRow, missingRow] = ids;
    await stack.pool.query("UPDATE trajectories SET status = 'failed' WHERE trajectory_id = $1", [failedRow]);
    await stack.pool.query('DELETE FROM trajectories WHERE trajectory_id = $1', [missingRow]);
    await stack.pool.query("UPDATE trajectories SET status = 'completed' WHERE trajectory_id = $1", [terminated]);

    // The controller's sweep (every 300 ms) finds all three.
    await until(async () => (await recorded()).length === 3, 30_000);
    expect(await recorded()).toEqual([
      { trajectory_id: failedRow, kind: 'temporal_completed_row_failed' },
      { trajectory_id: missingRow, kind: 'temporal_completed_row_missing' },
      { trajectory_id: terminated, kind: 'temporal_terminated_row_completed' },
    ]);
    // Another pass over the same workflows, as a second controller would make, counts none of them again.
    expect(await new StatusAgreementSweep(stack.pool, stack.client).sweep()).toBe(0);

    const scraped = await (await fetch(metrics!.url)).text();
    for (const kind of ['temporal_completed_row_failed', 'temporal_completed_row_missing', 'temporal_terminated_row_completed']) {
      expect(scraped).toContain(`ratchet_status_disagreements_total{kind="${kind}"} 1\n`);
    }

    const result = await runsStatus(stack.temporalAddress);
    expect(result.code, result.stderr).toBe(0);
    const { temporal } = JSON.parse(result.stdout);
    expect(temporal.workflows).toMatchObject({ Completed: 5, Terminated: 1 });
    expect(temporal.disagreements).toBe(3);
    expect(temporal.disagreeing).toHaveLength(3);
    expect(temporal.disagreeing).toEqual(
      expect.arrayContaining([
        { trajectoryId: failedRow, temporal: 'Completed', row: 'failed' },
        { trajectoryId: missingRow, temporal: 'Completed', row: null },
        { trajectoryId: terminated, temporal: 'Terminated', row: 'completed' },
      ]),
    );

    expect(await trajectoryPage(failedRow!)).toMatch(
      /id="status-disagreement">Temporal and Postgres disagree: Temporal says Completed, the row says failed\./,
    );
    expect(await trajectoryPage(missingRow!)).toContain('Temporal says Completed, the row says nothing (there is no row)');
    expect(await trajectoryPage(ids[3]!)).not.toContain('status-disagreement');
    const runPage = await (await fetch(`${ui!.url}/runs/agree`)).text();
    expect(runPage).toMatch(/id="run-disagreements">Temporal and Postgres disagree on <b>3<\/b> trajectories/);
  });

  it("still prints Postgres's counters when Temporal is unreachable, and says so", { timeout: 60_000 }, async () => {
    const result = await runsStatus(`127.0.0.1:${await freePort()}`);
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ runId: 'agree', accepted: 3, temporal: { reachable: false } });
    expect(result.stderr).toContain('Temporal was unreachable');
  });
});

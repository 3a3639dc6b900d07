import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;

beforeAll(async () => {
  // Turns of several seconds: a trajectory is still running when the operator terminates it.
  stack = await startTestStack({ tokensPerSecond: 100, reasoningTokens: 600, seed: 11 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController({ sweepMs: 300 });
});

afterAll(async () => {
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

const row = async (trajectoryId: string) =>
  (
    await stack.pool.query<{ status: string; failure_type: string; failure_class: string; error: string }>(
      'SELECT status, failure_type, failure_class, error FROM trajectories WHERE trajectory_id = $1',
      [trajectoryId],
    )
  ).rows[0];

describe('a trajectory whose workflow is closed from outside Ratchet', () => {
  it('is recorded as failed (WorkflowClosed), so its group finishes and the run admits the next group', { timeout: 120_000 }, async () => {
    // One group at a time: a group left waiting on a terminated member would stop the run for good.
    const run: RunConfig = { runId: 'terminated', maxHeadOffpolicyness: 8, batchSize: 1, maxConcurrent: 1 };
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const groups = await client.submit(run, stack.problems.slice(0, 2), { samples: 2, rollout: { turns: 1 } });
    const [first, second] = groups.map((group) => group.trajectoryIds);

    // The first group is admitted and generating; the second waits for it.
    await until(async () => (await stack.pool.query('SELECT 1 FROM turn_checkpoints WHERE trajectory_id = $1', [first![0]])).rowCount! > 0, 60_000);
    await stack.client.workflow.getHandle(first![0]!).terminate('an operator stopped it');

    await until(async () => (await row(first![0]!)) !== undefined, 30_000);
    const terminated = (await row(first![0]!))!;
    expect(terminated).toMatchObject({ status: 'failed', failure_type: 'WorkflowClosed', failure_class: 'infrastructure' });
    expect(terminated.error).toMatch(/terminated from outside Ratchet/);

    // Its sibling finishes the group; the run goes on to the second group, which completes.
    for (const id of [first![1]!, ...second!]) await until(async () => (await row(id))?.status === 'completed', 90_000);
    const {
      rows: [group],
    } = await stack.pool.query<{ finished: number; completed: number }>('SELECT finished, completed FROM rollout_groups WHERE group_id = $1', [
      groups[0]!.groupId,
    ]);
    expect(group).toEqual({ finished: 2, completed: 1 });
  });

  it('is recorded once, however many sweeps see it, and a trajectory outside any group gets its row too', { timeout: 60_000 }, async () => {
    const [request] = trajectoryRequests('lone', stack.problems.slice(2, 3), 1, { turns: 1 });
    const { handle } = await submitTrajectory(stack.client, request!);
    await until(
      async () => (await stack.pool.query('SELECT 1 FROM trajectory_prompts WHERE trajectory_id = $1', [request!.trajectoryId])).rowCount! > 0,
      30_000,
    );
    await handle.terminate();
    await until(async () => (await row(request!.trajectoryId)) !== undefined, 30_000);
    expect(await row(request!.trajectoryId)).toMatchObject({ status: 'failed', failure_type: 'WorkflowClosed' });

    // Several more sweeps pass over both terminated trajectories: nothing is stored or counted twice.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const { rows } = await stack.pool.query("SELECT count(*)::int AS n FROM trajectories WHERE failure_type = 'WorkflowClosed'");
    expect(rows[0].n).toBe(2);
  });

  it('cancelled before its first step finished (its failure path not armed yet), it is recorded as failed too', { timeout: 60_000 }, async () => {
    // No CPU worker: the cancel is in the history before the workflow's first task runs, so its first step is cancelled.
    await stopWorkers?.();
    const [request] = trajectoryRequests('early-cancel', stack.problems.slice(3, 4), 1, { turns: 1 });
    const { handle } = await submitTrajectory(stack.client, request!);
    await handle.cancel();
    stopWorkers = await stack.startWorkers();
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    await until(async () => (await row(request!.trajectoryId)) !== undefined, 30_000);
    const recorded = (await row(request!.trajectoryId))!;
    expect(recorded).toMatchObject({ status: 'failed', failure_type: 'WorkflowClosed', failure_class: 'infrastructure' });
    expect(recorded.error).toMatch(/cancelled before it could record itself/);
  });
});

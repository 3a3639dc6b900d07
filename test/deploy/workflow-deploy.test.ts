import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { submitTrajectory, trajectoryRequests } from '../../src/rollout/submit.js';
import { publishPolicyVersion } from '../../src/store/policy-versions.js';
import { workflowBundle } from '../../src/workers/workflow-bundle.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';

const EventType = temporal.api.enums.v1.EventType;
/** The trajectory workflow as release 1 shipped it (grouped admission, fixed 60 s re-checks, no request schema). */
const RELEASE_1 = path.resolve(import.meta.dirname, 'workflow-releases/r1-grouped-admission/workflows/index.js');

let stack: TestStack;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // Slow decoding (~3 s a turn), so the plain trajectories are mid-turn when the deploy happens.
  stack = await startTestStack({ seed: 9, tokensPerSecond: 40 });
  stops.push(await stack.startController());
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stack?.stop();
});

async function events(workflowId: string, runId?: string) {
  const history = await stack.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return history.events ?? [];
}

/** Polls `check` until it says done; on timeout the error shows what it saw last. */
async function waitFor(what: string, check: () => Promise<{ done: boolean; seen: unknown }>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let last = await check(); !last.done; last = await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last saw ${JSON.stringify(last.seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('deploying a release that changes the trajectory workflow', () => {
  it('finishes every trajectory the previous release had queued or mid-turn, and the mixed histories replay', { timeout: 240_000 }, async () => {
    const release1 = await bundleWorkflowCode({ workflowsPath: RELEASE_1, logger: new DefaultLogger('WARN') });
    let stopRelease1: (() => Promise<void>) | undefined = await stack.startWorkers({ workflowBundle: release1 });
    stops.push(() => stopRelease1?.() ?? Promise.resolve());

    // Under release 1: plain trajectories that will be mid-turn, and groups that stay queued (η = 0, one group at a time,
    // and no version is published until after the deploy). Release 1 re-checks admission every second.
    const plain = trajectoryRequests('deploy-plain', stack.problems.slice(0, 3), 1, { turns: 3, maxNewTokens: 200 });
    const plainHandles = await Promise.all(plain.map(async (request) => (await submitTrajectory(stack.client, request)).handle));
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const run = { runId: 'deploy', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
    const groups = await client.submit(run, stack.problems.slice(3, 6), {
      samples: 2, rollout: { turns: 1, maxNewTokens: 60 },
      timeouts: { admissionRecheckSeconds: 1, admissionRecheckMaxSeconds: 2, admissionRechecksPerRun: 3 },
    });
    // Which group the controller admits first is its choice; the other two wait, re-checking.
    const groupedIds = groups.flatMap((group) => group.trajectoryIds);
    let queuedIds: string[] = [];
    await waitFor('plain trajectories mid-turn and queued ones re-checking under release 1', async () => {
      const phases = await Promise.all(plainHandles.map(async (handle) => (await handle.query<{ phase: string }>('state')).phase));
      const grouped = await Promise.all(groupedIds.map(async (id) => ({
        id,
        phase: (await stack.client.workflow.getHandle(id).query<{ phase: string }>('state')).phase,
        rechecks: (await events(id)).filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED).length,
      })));
      queuedIds = grouped.filter((g) => g.phase === 'queued' && g.rechecks >= 2).map((g) => g.id);
      return { done: phases.every((phase) => phase === 'generating') && queuedIds.length === 4, seen: { phases, grouped } };
    });
    const firstRuns = new Map(await Promise.all(queuedIds.map(async (id) => [id, (await stack.client.workflow.getHandle(id).describe()).runId] as const)));

    // The deploy: release 1's worker goes, the current release's comes.
    await stopRelease1();
    stopRelease1 = undefined;
    stops.push(await stack.startWorkers());

    // Queued trajectories now back off and continue as new after three re-checks of the new release.
    await waitFor('every queued trajectory to continue as new', async () => {
      const runs = await Promise.all(queuedIds.map(async (id) => (await stack.client.workflow.getHandle(id).describe()).runId));
      return { done: runs.every((runId, i) => runId !== firstRuns.get(queuedIds[i]!)), seen: runs };
    }, 90_000);
    for (let version = 1; version <= groups.length; version++) await publishPolicyVersion(stack.pool, version);

    const results = await Promise.all([...plainHandles.map((handle) => handle.result()), ...(await client.wait(groups))]);
    expect(results.map((result) => result.status)).toEqual(results.map(() => 'completed'));
    const rows = await stack.pool.query<{ trajectory_id: string; status: string }>(
      "SELECT trajectory_id, status FROM trajectories WHERE trajectory_id LIKE 'deploy%' ORDER BY trajectory_id");
    const expected = [...plain.map((request) => request.trajectoryId), ...groups.flatMap((group) => group.trajectoryIds)].sort();
    expect(rows.rows.map((row) => row.trajectory_id)).toEqual(expected);
    expect(rows.rows.every((row) => row.status === 'completed')).toBe(true);

    // A queued trajectory's first run holds both releases: fixed re-checks recorded by release 1, then the patch
    // marker and a continue-as-new recorded by the current one.
    const first = await events(queuedIds[0]!, firstRuns.get(queuedIds[0]!));
    const marker = first.findIndex((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED);
    const firstTimer = first.findIndex((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED);
    expect(firstTimer).toBeGreaterThan(-1);
    expect(marker).toBeGreaterThan(firstTimer);
    expect(first.at(-1)?.eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);

    // Every history of the deployed-over trajectories, first runs included, replays against the current code.
    const histories = await Promise.all([
      ...plainHandles.map(async (handle) => ({ workflowId: handle.workflowId, history: await handle.fetchHistory() })),
      ...queuedIds.map(async (id) => ({ workflowId: id, history: await stack.client.workflow.getHandle(id, firstRuns.get(id)).fetchHistory() })),
    ]);
    for await (const outcome of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
      expect(outcome.error, `${outcome.workflowId}: ${String(outcome.error)}`).toBeUndefined();
    }
  });
});

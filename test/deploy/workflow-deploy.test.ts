import path from 'node:path';
import { describe, it, type ExpectStatic } from 'vitest';
import { QueryNotRegisteredError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { workflowBundle } from '../../src/workers/workflow-bundle.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { GPU_TASK_QUEUE } from '../../src/task-queues.js';

const EventType = temporal.api.enums.v1.EventType;
/**
 * Earlier releases of the trajectory workflow as they shipped: release 1 (grouped admission, fixed 60 s re-checks,
 * no request schema), release 2 (request schema, back-off and continue-as-new; verify and feedback as two
 * activities on the CPU task queue), release 3 (local steps), release 4 (the stored row decides the end), release 5
 * (environments, turn affinity), release 6 (the episode from parts, one marker per change) and release 7 (one marker
 * per run). The current release must finish what any of them left running or queued.
 */
const RELEASES = [
  { name: 'release 1', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r1-grouped-admission/workflows/index.js') },
  { name: 'release 2', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r2-continue-as-new/workflows/index.js') },
  { name: 'release 3', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r3-local-steps/workflows/index.js') },
  { name: 'release 4', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r4-stored-outcome/workflows/index.js') },
  { name: 'release 5', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r5-environments-affinity/workflows/index.js') },
  { name: 'release 6', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r6-episode-parts/workflows/index.js') },
  { name: 'release 7', workflowsPath: path.resolve(import.meta.dirname, 'workflow-releases/r7-one-marker/workflows/index.js') },
];

/** The patch ids a history's `core_patch` markers record, in order. */
function patchIds(history: Awaited<ReturnType<typeof events>>): string[] {
  return history.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const payload = Object.values(marker.details ?? {})[0]?.payloads?.[0];
    return payload?.data ? [(JSON.parse(Buffer.from(payload.data).toString('utf8')) as { id: string }).id] : [];
  });
}

async function events(stack: TestStack, workflowId: string, runId?: string) {
  const history = await stack.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return history.events ?? [];
}

/**
 * Polls `check` until it says done; on timeout the error shows what it saw last. Releases up to 6 register the `state`
 * query only after their first activity, so a query that early is "not yet", not a failure; any other error is.
 */
async function waitFor(what: string, check: () => Promise<{ done: boolean; seen: unknown }>, timeoutMs = 60_000): Promise<void> {
  const fatal = (error: unknown) => !(error instanceof QueryNotRegisteredError);
  await pollUntil(check, { what, timeoutMs, intervalMs: 250, done: (last) => last.done, fatal });
}

// The releases side by side, each on a stack of its own (policy versions are global, and each case publishes some):
// one after another they took 170 s of CI, mostly waiting on decoding and re-check timers. At most SIDE_BY_SIDE at
// once: seven stacks beside the other CI lane's vLLM starts left too little CPU for the polls below (a wait timed out).
const SIDE_BY_SIDE = 4;
let running = 0;
const waiting: (() => void)[] = [];

/** Waits for a free place among the releases running side by side; returns what frees it. */
async function place(): Promise<() => void> {
  while (running >= SIDE_BY_SIDE) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  return () => {
    running -= 1;
    waiting.shift()?.();
  };
}

describe.concurrent('deploying the current release', () => {
  it.for(RELEASES)(
    'over $name: finishes every trajectory the previous release had queued or mid-turn, and the mixed histories replay',
    { timeout: 360_000 },
    async ({ name, workflowsPath }, { expect }) => {
      const free = await place();
      try {
        // Slow decoding (~5 s a turn), so the plain trajectories are mid-turn when the deploy happens.
        const stack = await startTestStack({ seed: 9, tokensPerSecond: 25 });
        const stops: (() => Promise<void>)[] = [await stack.startController()];
        try {
          await deployOver(stack, stops, name, workflowsPath, expect);
        } finally {
          for (const stop of stops.reverse()) await stop().catch(() => undefined);
          await stack.stop();
        }
      } finally {
        free();
      }
    },
  );
});

async function deployOver(
  stack: TestStack,
  stops: (() => Promise<void>)[],
  name: string,
  workflowsPath: string,
  expect: ExpectStatic,
): Promise<void> {
  const prefix = `deploy-${name.replace(' ', '')}`;
  const release1 = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
  let stopRelease1: (() => Promise<void>) | undefined = await stack.startWorkers({ workflowBundle: release1 });
  stops.push(() => stopRelease1?.() ?? Promise.resolve());

  // Under release 1: plain trajectories that will be mid-turn, and groups that stay queued (η = 0, one group at a time,
  // and no version is published until after the deploy). Release 1 re-checks admission every second.
  const plain = trajectoryRequests(`${prefix}-plain`, stack.problems.slice(0, 3), 1, { turns: 3, maxNewTokens: 200 });
  const plainHandles = await Promise.all(plain.map(async (request) => (await submitTrajectory(stack.client, request)).handle));
  const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
  const run = { runId: prefix, maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
  const groups = await client.submit(run, stack.problems.slice(3, 6), {
    samples: 2,
    rollout: { turns: 1, maxNewTokens: 60 },
    timeouts: { admissionRecheckSeconds: 1, admissionRecheckMaxSeconds: 2, admissionRechecksPerRun: 3 },
  });
  // Which group the controller admits first is its choice; the other two wait, re-checking.
  const groupedIds = groups.flatMap((group) => group.trajectoryIds);
  let queuedIds: string[] = [];
  const rechecked = new Set<string>(); // a history is read until it shows a re-check: each poll stays short under load
  await waitFor('plain trajectories mid-turn and queued ones re-checking under release 1', async () => {
    const phases = await Promise.all(plainHandles.map(async (handle) => (await handle.query<{ phase: string }>('state')).phase));
    const grouped = await Promise.all(
      groupedIds.map(async (id) => {
        const phase = (await stack.client.workflow.getHandle(id).query<{ phase: string }>('state')).phase;
        if (!rechecked.has(id) && (await events(stack, id)).some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED)) rechecked.add(id);
        return { id, phase, rechecked: rechecked.has(id) };
      }),
    );
    queuedIds = grouped.filter((g) => g.phase === 'queued' && g.rechecked).map((g) => g.id);
    return { done: phases.every((phase) => phase === 'generating') && queuedIds.length === 4, seen: { phases, grouped } };
  });

  // The deploy: the old release's worker goes, the current release's comes. The runs open at that moment are the
  // old release's (release 2 continues as new on its own); every run after them is the current release's.
  await stopRelease1();
  stopRelease1 = undefined;
  const firstRuns = new Map(
    await Promise.all(queuedIds.map(async (id) => [id, (await stack.client.workflow.getHandle(id).describe()).runId] as const)),
  );
  const stopCurrent = await stack.startWorkers();
  stops.push(stopCurrent);

  // Queued trajectories now back off and continue as new after three re-checks of the new release.
  await waitFor(
    'every queued trajectory to continue as new',
    async () => {
      const runs = await Promise.all(queuedIds.map(async (id) => (await stack.client.workflow.getHandle(id).describe()).runId));
      const seen = await Promise.all(
        queuedIds.map(async (id, i) => ({
          id,
          continued: runs[i] !== firstRuns.get(id),
          last: (await events(stack, id)).slice(-4).map((e) => EventType[e.eventType!]?.replace('EVENT_TYPE_', '')),
        })),
      );
      return { done: runs.every((runId, i) => runId !== firstRuns.get(queuedIds[i]!)), seen };
    },
    90_000,
  );
  for (let version = 1; version <= groups.length; version++) await publishPolicyVersion(stack.pool, version);

  const results = await Promise.all([...plainHandles.map((handle) => handle.result()), ...(await client.wait(groups))]);
  expect(results.map((result) => result.status)).toEqual(results.map(() => 'completed'));
  const rows = await stack.pool.query<{ trajectory_id: string; status: string }>(
    'SELECT trajectory_id, status FROM trajectories WHERE trajectory_id LIKE $1 ORDER BY trajectory_id',
    [`${prefix}%`],
  );
  const expected = [...plain.map((request) => request.trajectoryId), ...groups.flatMap((group) => group.trajectoryIds)].sort();
  expect(rows.rows.map((row) => row.trajectory_id)).toEqual(expected);
  expect(rows.rows.every((row) => row.status === 'completed')).toBe(true);

  const first = await events(stack, queuedIds[0]!, firstRuns.get(queuedIds[0]!));
  expect(first.at(-1)?.eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
  if (name === 'release 1') {
    // A queued trajectory's first run holds both releases: fixed re-checks recorded by release 1, then the patch
    // marker and a continue-as-new recorded by the current one.
    const marker = first.findIndex((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED);
    const firstTimer = first.findIndex((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED);
    expect(firstTimer).toBeGreaterThan(-1);
    expect(marker).toBeGreaterThan(firstTimer);
  } else if (name === 'release 3') {
    // A trajectory mid-turn at the deploy ran its turns as local steps, and persisted under the current release's
    // rule: the stored row decides how it ends (patch `stored-outcome`, recorded after the deploy).
    const plainEvents = await events(stack, plainHandles[0]!.workflowId);
    expect(patchIds(plainEvents)).toEqual(['local-steps', 'stored-outcome']);
  } else if (name === 'release 4') {
    // A trajectory mid-turn at the deploy finished the way release 4 ran it: the seed's math loop (no environment
    // step kept), every turn on the shared GPU queue (no turn affinity: patches `environments` and `turn-affinity`
    // are checked only at a run's start).
    const plainEvents = await events(stack, plainHandles[0]!.workflowId);
    expect(patchIds(plainEvents)).toEqual(['local-steps', 'stored-outcome']);
    const queues = plainEvents.map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name).filter(Boolean);
    expect([...new Set(queues)]).toEqual([GPU_TASK_QUEUE]);
    const {
      rows: [row],
    } = await stack.pool.query('SELECT environment FROM trajectories WHERE trajectory_id = $1', [plainHandles[0]!.workflowId]);
    expect(row).toEqual({ environment: null });
  } else if (name === 'release 5') {
    // A trajectory mid-turn at the deploy finished the way release 5 ran it: in its environment, unbounded (patch
    // `bounded-environments` is checked only at a run's start), its turns on the queue of the server before.
    const plainEvents = await events(stack, plainHandles[0]!.workflowId);
    expect(patchIds(plainEvents)).toEqual(['local-steps', 'turn-affinity', 'environments', 'stored-outcome']);
    const {
      rows: [row],
    } = await stack.pool.query('SELECT environment FROM trajectories WHERE trajectory_id = $1', [plainHandles[0]!.workflowId]);
    expect(row).toEqual({ environment: 'math' });
  } else if (name === 'release 6') {
    // A trajectory mid-turn at the deploy finished the way release 6 ran it: one marker per change, four at its
    // start and `stored-outcome` asked at its end, where release 6 asks (release 7 records one marker for all).
    const plainEvents = await events(stack, plainHandles[0]!.workflowId);
    expect(patchIds(plainEvents)).toEqual(['local-steps', 'turn-affinity', 'environments', 'bounded-environments', 'stored-outcome']);
  } else if (name === 'release 7') {
    // A trajectory mid-turn at the deploy finished under the current release with the one marker release 7 recorded
    // at its start: release 8 (agent programs) adds no marker, and its loop's one change issues no other command.
    const plainEvents = await events(stack, plainHandles[0]!.workflowId);
    expect(patchIds(plainEvents)).toEqual(['release-7']);
    expect(plainEvents.at(-1)?.eventType).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  } else {
    // A trajectory mid-turn at the deploy finished the way it started: verify and feedback as activities on the
    // CPU task queue, also for the turns run after the deploy.
    const plainEvents = await events(stack, plainHandles[0]!.workflowId);
    const scheduled = plainEvents.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(scheduled.filter((type) => type === 'verify')).toHaveLength(3);
    expect(scheduled).not.toContain('environmentStep');
  }
  // The run a queued trajectory continued into is the current release's: local steps, no verify activity, and one
  // marker, its release's, for every change (admission back-off and the stored outcome included).
  const latest = await events(stack, queuedIds[0]!);
  expect(patchIds(latest)).toEqual(['release-7']);
  expect(latest.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(true);
  expect(latest.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'verify')).toBe(false);

  // Every history of the deployed-over trajectories, first runs included, replays against the current code.
  const histories = await Promise.all([
    ...plainHandles.map(async (handle) => ({ workflowId: handle.workflowId, history: await handle.fetchHistory() })),
    ...queuedIds.map(async (id) => ({ workflowId: id, history: await stack.client.workflow.getHandle(id, firstRuns.get(id)).fetchHistory() })),
  ]);
  for await (const outcome of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
    expect(outcome.error, `${outcome.workflowId}: ${String(outcome.error)}`).toBeUndefined();
  }
  await stopCurrent();
}

import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { submitTrajectory } from '../../src/client/submit.js';
import type { TrajectoryRequest } from '../../src/trajectory/request.js';

export interface RatchetPass {
  wallSeconds: number;
  completed: number;
  failed: number;
  turns: number;
}

/**
 * Submits the requests to Temporal and waits for every trajectory. `waitOn: 'postgres'` watches the stored rows,
 * as a trainer consuming from Postgres does; `'results'` waits on each workflow's result, as `ratchet run` does
 * (one long poll per trajectory, which the Temporal server answers at every event of that workflow).
 */
export async function runRatchetPass(
  client: Client,
  requests: readonly TrajectoryRequest[],
  waitOn: 'results' | { pool: pg.Pool } = 'results',
): Promise<RatchetPass> {
  const started = performance.now();
  if (waitOn === 'results') {
    const results = await runRollouts(client, requests);
    return {
      wallSeconds: (performance.now() - started) / 1000,
      completed: results.filter((r) => r.status === 'completed').length,
      failed: results.filter((r) => r.status === 'failed').length,
      turns: results.reduce((sum, r) => sum + r.turns.length, 0),
    };
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < requests.length; i = next++) await submitTrajectory(client, requests[i]!);
    }),
  );
  const ids = requests.map((r) => r.trajectoryId);
  for (;;) {
    const {
      rows: [row],
    } = await waitOn.pool.query<{ completed: number; failed: number; turns: number }>(
      `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'failed')::int AS failed,
         coalesce(sum(num_turns) FILTER (WHERE status = 'completed'), 0)::int AS turns
       FROM trajectories WHERE trajectory_id = ANY($1)`,
      [ids],
    );
    if (row!.completed + row!.failed >= ids.length) return { wallSeconds: (performance.now() - started) / 1000, ...row! };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Mean history events and bytes of a sample of the trajectories' workflows. */
export async function historySize(client: Client, trajectoryIds: readonly string[]): Promise<{ events: number; bytes: number }> {
  let events = 0;
  let bytes = 0;
  for (const id of trajectoryIds) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    events += history.events?.length ?? 0;
    bytes += temporal.api.history.v1.History.encode(history).finish().length;
  }
  return { events: Math.round(events / trajectoryIds.length), bytes: Math.round(bytes / trajectoryIds.length) };
}

/**
 * Where the time between two turns goes, from the trajectories' histories (mean ms over every gap): from one
 * generate activity's completion to the workflow task's start (the server and matching), and that task's run (the
 * environment's step, a local activity, in it) to its completion, which schedules the next turn. The turn's wait on
 * its queue follows (`queue_ms`). A GPU slot kept for the returning turn stands idle for all of it. (Not the next
 * activity's started event: Temporal writes it, with that time, only when the attempt ends.)
 */
export async function betweenTurns(client: Client, trajectoryIds: readonly string[]): Promise<Record<string, number>> {
  const EventType = temporal.api.enums.v1.EventType;
  const sums = { scheduledToCompleted: 0, completedToTaskStarted: 0, taskStartedToCompleted: 0, total: 0 };
  let gaps = 0;
  for (const id of trajectoryIds) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const at = (i: number) => Number(events[i]!.eventTime!.seconds) * 1000 + Math.round((events[i]!.eventTime!.nanos ?? 0) / 1e6);
    const scheduled = new Map<number, string>();
    events.forEach((event, i) => {
      if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
        scheduled.set(Number(event.eventId), event.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
    });
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      if (event.eventType !== EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) continue;
      if (scheduled.get(Number(event.activityTaskCompletedEventAttributes?.scheduledEventId)) !== 'generate') continue;
      const scheduledAt = events.findIndex((e) => Number(e.eventId) === Number(event.activityTaskCompletedEventAttributes?.scheduledEventId));
      const find = (type: number, from: number) => events.findIndex((e, j) => j > from && e.eventType === type);
      const taskStarted = find(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, i);
      const taskCompleted = find(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, taskStarted);
      if (taskStarted < 0 || taskCompleted < 0) continue;
      sums.scheduledToCompleted += at(i) - at(scheduledAt);
      sums.completedToTaskStarted += at(taskStarted) - at(i);
      sums.taskStartedToCompleted += at(taskCompleted) - at(taskStarted);
      sums.total += at(taskCompleted) - at(i);
      gaps++;
    }
  }
  return { gaps, ...Object.fromEntries(Object.entries(sums).map(([key, sum]) => [key, gaps ? Math.round(sum / gaps) : 0])) };
}

/**
 * How full the GPU slots were, from every trajectory's history: the generate activities' busy slot-seconds (started
 * to completed) against the pass's wall and the slots; the ramp (first workflow started to the `slots`-th generate
 * started), the tail (the last generate completed to the last workflow completed), and the mean number of turns
 * generating in each tenth of the wall time (where the slots stood idle).
 */
export async function slotTimeline(client: Client, trajectoryIds: readonly string[], slots: number): Promise<Record<string, number | string>> {
  const EventType = temporal.api.enums.v1.EventType;
  const starts: number[] = [];
  const intervals: [number, number][] = [];
  let busyMs = 0;
  let first = Infinity;
  let lastCompleted = 0;
  let lastClosed = 0;
  for (const id of trajectoryIds) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const at = (event: (typeof events)[number]) => Number(event.eventTime!.seconds) * 1000 + Math.round((event.eventTime!.nanos ?? 0) / 1e6);
    const generates = new Set(
      events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'generate').map((e) => Number(e.eventId)),
    );
    const startedAt = new Map<number, number>();
    for (const event of events) {
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED) first = Math.min(first, at(event));
      const started = event.activityTaskStartedEventAttributes;
      if (started && generates.has(Number(started.scheduledEventId))) startedAt.set(Number(started.scheduledEventId), at(event));
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed && generates.has(Number(completed.scheduledEventId))) {
        const start = startedAt.get(Number(completed.scheduledEventId))!;
        starts.push(start);
        busyMs += at(event) - start;
        intervals.push([start, at(event)]);
        lastCompleted = Math.max(lastCompleted, at(event));
      }
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED) lastClosed = Math.max(lastClosed, at(event));
    }
  }
  starts.sort((a, b) => a - b);
  const wallMs = lastClosed - first;
  const tenth = wallMs / 10;
  const byTenth = Array.from({ length: 10 }, (_, i) => {
    const [from, to] = [first + i * tenth, first + (i + 1) * tenth];
    const overlap = intervals.reduce((sum, [start, end]) => sum + Math.max(0, Math.min(end, to) - Math.max(start, from)), 0);
    return +(overlap / tenth).toFixed(1);
  });
  return {
    generatingByTenth: byTenth.join(' '),
    wallSeconds: wallMs / 1000,
    busySlotSeconds: Math.round(busyMs / 1000),
    utilisation: +(busyMs / (wallMs * slots)).toFixed(4),
    rampSeconds: ((starts[Math.min(slots, starts.length) - 1] ?? first) - first) / 1000,
    tailSeconds: (lastClosed - lastCompleted) / 1000,
  };
}

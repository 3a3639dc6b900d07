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

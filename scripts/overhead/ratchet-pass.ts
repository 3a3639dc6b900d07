import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { runRollouts } from '../../src/rollout/run-rollouts.js';
import type { TrajectoryRequest } from '../../src/trajectory/request.js';

export interface RatchetPass {
  wallSeconds: number;
  completed: number;
  failed: number;
  turns: number;
}

/** Submits the requests to Temporal, as a trainer would, and waits for every trajectory. */
export async function runRatchetPass(client: Client, requests: readonly TrajectoryRequest[]): Promise<RatchetPass> {
  const started = performance.now();
  const results = await runRollouts(client, requests);
  const wallSeconds = (performance.now() - started) / 1000;
  return {
    wallSeconds,
    completed: results.filter((r) => r.status === 'completed').length,
    failed: results.filter((r) => r.status === 'failed').length,
    turns: results.reduce((sum, r) => sum + r.turns.length, 0),
  };
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

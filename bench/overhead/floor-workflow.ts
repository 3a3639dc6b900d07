import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { FloorActivities } from './floor-activities.js';

const remote = proxyActivities<FloorActivities>({ taskQueue: 'floor-gpu', startToCloseTimeout: '60s', heartbeatTimeout: '30s' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '20s' });

/**
 * A trajectory's shape with no work in it: check and tokenize, then per turn a generate activity on another task
 * queue and an environment step, then persist; each a no-op. Its history is release 3's less the patch marker and
 * the final search-attribute upsert, with near-empty payloads.
 */
export async function floorTrajectory(turns: number): Promise<void> {
  await local.step(0);
  await local.step(0);
  for (let turn = 0; turn < turns; turn++) {
    await remote.generate(turn);
    await local.step(turn);
  }
  await local.finish();
}

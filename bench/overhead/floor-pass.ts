import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { finished, floorActivities } from './floor-activities.js';

export interface FloorPass {
  wallSeconds: number;
  workflows: number;
}

const WORKFLOWS = fileURLToPath(new URL('./floor-workflow.ts', import.meta.url));

/**
 * Temporal's own floor for Ratchet's shape: workflows with the trajectory's activities, local activities and task
 * queues, and no work in any of them, run by two SDK workers in this process. Whatever Ratchet does on top costs
 * more than this; the server's CPU here is what one trajectory costs Temporal before any domain work. `onWarm` is
 * called after the workers started and warmed up, right before the measured pass.
 */
export async function runFloorPass(client: Client, address: string, count: number, turns: number, onWarm: () => void): Promise<FloorPass> {
  const connection = await NativeConnection.connect({ address });
  const cpu = await Worker.create({ connection, taskQueue: 'floor-cpu', workflowsPath: WORKFLOWS, activities: floorActivities });
  const gpu = await Worker.create({ connection, taskQueue: 'floor-gpu', activities: floorActivities, maxConcurrentActivityTaskExecutions: 32 });
  const running = Promise.all([cpu.run(), gpu.run()]);
  try {
    await pass(client, 8, turns, `floor-warmup-${Date.now()}`);
    onWarm();
    const started = performance.now();
    await pass(client, count, turns, `floor-${Date.now()}`);
    return { wallSeconds: (performance.now() - started) / 1000, workflows: count };
  } finally {
    cpu.shutdown();
    gpu.shutdown();
    await running;
    await connection.close();
  }
}

/** Starts `count` workflows, 32 starts in flight as Ratchet's client keeps them, and waits until all finished. */
async function pass(client: Client, count: number, turns: number, prefix: string): Promise<void> {
  const target = finished.count + count;
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < count; i = next++) {
        await client.workflow.start('floorTrajectory', { taskQueue: 'floor-cpu', workflowId: `${prefix}-${i}`, args: [turns] });
      }
    }),
  );
  while (finished.count < target) await new Promise((resolve) => setTimeout(resolve, 50));
}

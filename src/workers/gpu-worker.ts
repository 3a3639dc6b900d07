import { Worker, type NativeConnection } from '@temporalio/worker';
import type pg from 'pg';
import { createGpuActivities } from '../activities/index.js';
import type { SglangClient } from '../policy/sglang-client.js';
import { GPU_TASK_QUEUE } from '../task-queues.js';

export interface GpuWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  pool: pg.Pool;
  policy: SglangClient;
  /** Concurrent generations: the inference server's batch capacity, so the GPU is full but never queued past it. */
  slots: number;
  taskQueue?: string;
}

/** The GPU worker: activity-only, generation on its own task queue, a fixed number of slots. */
export function createGpuWorker(deps: GpuWorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue ?? GPU_TASK_QUEUE,
    activities: createGpuActivities(deps),
    maxConcurrentActivityTaskExecutions: deps.slots,
  });
}

import { Worker, type NativeConnection } from '@temporalio/worker';
import type pg from 'pg';
import { createGpuActivities } from '../activities/index.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import type { ServedLogprobs } from '../policy/logprob-verdict.js';
import { GPU_TASK_QUEUE } from '../task-queues.js';

export interface GpuWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  pool: pg.Pool;
  backend: InferenceBackend;
  /** The policy version the server serves (for tokens the server does not tag itself). */
  currentVersion: () => number;
  /** Concurrent generations: the inference server's batch capacity, so the GPU is full but never queued past it. */
  slots: number;
  /**
   * How often a generating turn checkpoints its partial output to Postgres and heartbeats a cursor to it: at
   * most this many ms of tokens are generated twice when a worker dies.
   */
  heartbeatIntervalMs?: number;
  taskQueue?: string;
}

/**
 * The GPU worker: activity-only, generation on its own task queue, a fixed number of slots. `servedLogprobs` is
 * what the start-up probe finds the server's logprobs to be of; requests they would be wrong for are refused.
 */
export function createGpuWorker(deps: GpuWorkerDeps & { servedLogprobs: () => Promise<ServedLogprobs> }): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue ?? GPU_TASK_QUEUE,
    activities: createGpuActivities({ ...deps, heartbeatIntervalMs: heartbeatInterval(deps) }),
    maxConcurrentActivityTaskExecutions: deps.slots,
    // The SDK otherwise holds heartbeats back for up to 80% of the heartbeat timeout.
    maxHeartbeatThrottleInterval: heartbeatInterval(deps),
  });
}

function heartbeatInterval(deps: GpuWorkerDeps): number {
  return deps.heartbeatIntervalMs ?? 2_000;
}

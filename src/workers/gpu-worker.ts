import os from 'node:os';
import { Worker, type NativeConnection } from '@temporalio/worker';
import type pg from 'pg';
import { createGpuActivities } from '../activities/index.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import type { ServedLogprobs } from '../policy/logprob-verdict.js';
import type { ServedVersion } from '../policy/resumable-generation.js';
import { GPU_TASK_QUEUE, serverTaskQueue } from '../task-queues.js';
import { ServerSlots } from './server-slots.js';
import type { GenerateInput, GenerateResult } from '../activities/generate.js';
import { WORKER_SHUTDOWN_FORCE_TIME } from './shutdown-bound.js';

export interface GpuWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  pool: pg.Pool;
  backend: InferenceBackend;
  /** The policy version the server serves (for tokens the server does not tag itself). */
  currentVersion: ServedVersion;
  /** Concurrent generations: the inference server's batch capacity, so the GPU is full but never queued past it. */
  slots: number;
  /**
   * How often a generating turn checkpoints its partial output to Postgres and heartbeats a cursor to it: at
   * most this many ms of tokens are generated twice when a worker dies.
   */
  heartbeatIntervalMs?: number;
  taskQueue?: string;
  /**
   * Names this server's own task queue (turn affinity): by default this host and the server's address, so that
   * every GPU worker in front of the same server polls the same queue, and a restarted one finds its trajectories.
   */
  serverName?: string;
}

/** The GPU worker's two Temporal workers: one on the shared queue, one on its server's own. */
export interface GpuWorkers {
  shared: Worker;
  own: Worker;
  ownQueue: string;
}

/**
 * The GPU worker: activity-only, generation for one inference server. It polls the shared GPU queue (first turns,
 * and turns whose server is gone or full) and its server's own queue, where a trajectory's next turn is sent so that
 * it finds its prefix in that server's cache; both share the server's slots (ServerSlots). `servedLogprobs` is what
 * the start-up probe finds the server's logprobs to be of; requests they would be wrong for are refused.
 */
export async function createGpuWorkers(deps: GpuWorkerDeps & { servedLogprobs: () => Promise<ServedLogprobs> }): Promise<GpuWorkers> {
  const ownQueue = serverTaskQueue(deps.serverName ?? defaultServerName(deps.backend.url));
  const slots = new ServerSlots(deps.slots);
  const { generate } = createGpuActivities({ ...deps, heartbeatIntervalMs: heartbeatInterval(deps), affinityQueue: ownQueue });
  // A turn with another to come keeps its slot here for it (release 6 tells; earlier releases' turns do not).
  const activities = {
    generate: async (input: GenerateInput): Promise<GenerateResult> => {
      const output = await generate(input);
      if (input.moreTurns === true && !output.contextExhausted) slots.expectReturn();
      return output;
    },
  };
  const options = {
    connection: deps.connection,
    namespace: deps.namespace,
    activities,
    // The SDK otherwise holds heartbeats back for up to 80% of the heartbeat timeout.
    maxHeartbeatThrottleInterval: heartbeatInterval(deps),
    shutdownForceTime: WORKER_SHUTDOWN_FORCE_TIME,
  };
  const shared = await Worker.create({ ...options, taskQueue: deps.taskQueue ?? GPU_TASK_QUEUE, tuner: slots.sharedTuner() });
  const own = await Worker.create({ ...options, taskQueue: ownQueue, tuner: slots.ownTuner() });
  return { shared, own, ownQueue };
}

/** This host and the server's address: the server's cache is what a trajectory has affinity to. */
export function defaultServerName(serverUrl: string): string {
  let address = serverUrl;
  try {
    address = new URL(serverUrl).host;
  } catch {
    // A backend with no URL of its own (a test's scripted server) is named as given.
  }
  return `${os.hostname()}/${address}`;
}

function heartbeatInterval(deps: GpuWorkerDeps): number {
  return deps.heartbeatIntervalMs ?? 2_000;
}

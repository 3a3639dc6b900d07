import type { NativeConnection } from '@temporalio/worker';
import type pg from 'pg';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { runGpuWorkerWhileHealthy } from '../workers/healthy-gpu-worker.js';
import { PolicyVersionWatcher, type WeightProofPolicy } from './policy-version-watcher.js';

export interface GpuWorkerServiceOptions {
  connection: NativeConnection;
  namespace: string;
  pool: pg.Pool;
  databaseUrl: string;
  backend: InferenceBackend;
  slots: number;
  /** Names the server's own task queue (turn affinity); by default this host and the server's address. */
  serverName?: string;
  heartbeatIntervalMs?: number;
  /** How often published versions and server health are polled (NOTIFY makes versions faster anyway). */
  versionPollMs?: number;
  healthIntervalMs?: number;
  /** Whether versions published without a probe reference may be served (default: RATCHET_WEIGHT_PROOF, else required). */
  weightProof?: WeightProofPolicy;
}

/**
 * A GPU worker with everything around it: the server follows published policy versions, and the worker
 * polls only while the server is healthy. Runs until `stop()`, which also stops following versions.
 */
export async function startGpuWorkerService(options: GpuWorkerServiceOptions): Promise<{ done: Promise<void>; stop(): Promise<void> }> {
  const versions = new PolicyVersionWatcher(options.pool, options.databaseUrl, options.backend, {
    pollMs: options.versionPollMs,
    weightProof: options.weightProof,
  });
  await versions.start();
  const abort = new AbortController();
  const done = runGpuWorkerWhileHealthy(
    {
      connection: options.connection,
      namespace: options.namespace,
      pool: options.pool,
      backend: options.backend,
      currentVersion: versions.current,
      slots: options.slots,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      serverName: options.serverName,
    },
    { signal: abort.signal, intervalMs: options.healthIntervalMs, usable: versions.usable },
  ).finally(() => versions.stop());
  return {
    done,
    stop: async () => {
      abort.abort();
      await done.catch(() => undefined);
    },
  };
}

import type { Worker } from '@temporalio/worker';
import { log } from '../logging.js';
import { createGpuWorkers, type GpuWorkerDeps } from './gpu-worker.js';
import { probeInBackground } from './logprob-probe-run.js';

export interface HealthGateOptions {
  /** How often the server's health is checked. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Besides the server's health: whether it serves weights a policy version vouches for (the version watcher's). */
  usable?: () => boolean;
}

/**
 * Runs a GPU worker only while its inference server is healthy. When the server turns unhealthy the worker
 * stops polling (in-flight turns fail over by retry) instead of taking tasks it would fail; when the server
 * is healthy again a new worker starts polling. Each new worker probes what the server's logprobs are of (a
 * restarted server may have other flags) and refuses the requests they would be wrong for. Returns when `signal`
 * aborts.
 */
export async function runGpuWorkerWhileHealthy(deps: GpuWorkerDeps, options: HealthGateOptions = {}): Promise<void> {
  const intervalMs = options.intervalMs ?? 2_000;
  const stopped = () => options.signal?.aborted ?? false;
  const healthy = async () => (options.usable?.() ?? true) && (await deps.backend.health());
  while (!stopped()) {
    if (!(await healthy())) {
      await sleep(intervalMs, options.signal);
      continue;
    }
    const probe = new AbortController();
    const { shared, own } = await createGpuWorkers({ ...deps, servedLogprobs: probeInBackground(deps.backend, intervalMs, probe.signal) });
    const workers: Worker[] = [shared, own];
    const shutdown = () => {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    };
    const watch = setInterval(() => {
      void healthy().then((ok) => {
        if (!ok && workers.some((worker) => worker.getState() === 'RUNNING')) {
          log.warn(
            { server: deps.backend.url },
            'inference server unhealthy or serving unvouched weights: GPU worker stops taking tasks until it recovers',
          );
          shutdown();
        }
      });
    }, intervalMs);
    // Either worker stopping (a failure, or the health check) stops the other: they serve one server together.
    const running = Promise.allSettled(workers.map((worker) => worker.run().finally(shutdown))).then((ends) => {
      const failed = ends.find((end) => end.status === 'rejected');
      if (failed) throw failed.reason;
    });
    const onAbort = shutdown;
    // A stop that came while the worker was being created fires no event on the already-aborted signal.
    if (stopped()) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await running;
    } finally {
      probe.abort();
      clearInterval(watch);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

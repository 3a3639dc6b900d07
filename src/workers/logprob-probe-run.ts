import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../logging.js';
import { servedLogprobsSummary } from '../policy/faithful-logprobs.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { probeServedLogprobs } from '../policy/logprob-probe.js';
import type { ServedLogprobs } from '../policy/logprob-verdict.js';
import { PolicyUnavailable } from '../policy/policy-errors.js';

/**
 * Runs the logprob probe beside a worker that has just started polling, so the worker starts no later for it and
 * the seed's sampling never waits for it; a request that needs the verdict awaits it. It asks again every
 * `retryMs` while the server cannot be reached, and logs the verdict once. A worker stopped before the verdict
 * leaves its waiting requests PolicyUnavailable: they are retried, perhaps on another worker.
 */
export function probeInBackground(backend: InferenceBackend, retryMs: number, signal: AbortSignal): () => Promise<ServedLogprobs> {
  const verdict = (async () => {
    const stopped = () => new PolicyUnavailable(backend.url, 'the GPU worker stopped before its logprob probe reached the server');
    for (;;) {
      try {
        return logged(backend, await probeServedLogprobs(backend, signal));
      } catch (error) {
        if (signal.aborted) throw stopped();
        if (!(error instanceof PolicyUnavailable)) throw error;
      }
      await sleep(retryMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) throw stopped();
    }
  })();
  // Awaited only by requests that need it; one that nobody awaits must not be an unhandled rejection.
  verdict.catch(() => undefined);
  return () => verdict;
}

function logged(backend: InferenceBackend, served: ServedLogprobs): ServedLogprobs {
  const { faithful, message } = servedLogprobsSummary(served, backend.kind);
  if (faithful) log.info({ server: backend.url }, message);
  // A server seen returning raw logprobs is misconfigured; one the probe could not read (a peaked trained model
  // leaves no gap to measure) is only unproven, and the requests it cannot vouch for are refused either way.
  else if (served.temperature === 'ignored' || served.truncation === 'ignored') log.error({ server: backend.url }, message);
  else log.warn({ server: backend.url }, message);
  return served;
}

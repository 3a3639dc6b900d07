import { DEFAULT_SAMPLING, type SamplingParameters } from '../trajectory/sampling.js';
import type { InferenceBackend } from './inference-backend.js';
import { judgeServedLogprobs, PROBE_TEMPERATURE, PROBE_TOP_K, type ProbeObservation, type ServedLogprobs } from './logprob-verdict.js';
import { PolicyUnavailable } from './policy-errors.js';

/**
 * Short prompts of small token ids, valid in any vocabulary of a few thousand tokens; in Qwen3's they read
 * "The capital of France is" and "1 + 1 =". Two, so that one flat or peaked answer does not decide alone.
 */
const PROBE_PROMPTS: readonly (readonly number[])[] = [
  [785, 6722, 315, 9625, 374],
  [16, 488, 220, 16, 284],
];
/** Top logprobs per answer: vLLM's default `--max-logprobs` is 20. */
const PROBE_TOP = 8;

/** What a worker assumes before (or without) a probe: nothing, so it serves only the seed's sampling. */
export const UNPROBED: ServedLogprobs = { temperature: 'undecided', truncation: 'undecided', evidence: 'not probed' };

/**
 * Asks the server what its logprobs are of: six one-token requests (each prompt at temperature 1, at
 * PROBE_TEMPERATURE and at top-k PROBE_TOP_K), judged by `judgeServedLogprobs`. A server that cannot be reached
 * throws PolicyUnavailable (ask again later); one that refuses the probe is `undecided`, with its answer as evidence.
 * `signal` abandons it, throwing its reason.
 */
export async function probeServedLogprobs(backend: InferenceBackend, signal?: AbortSignal): Promise<ServedLogprobs> {
  const observations: ProbeObservation[] = [];
  try {
    for (const [prompt, inputIds] of PROBE_PROMPTS.entries()) {
      const ask = (what: string, sampling: SamplingParameters) =>
        backend.topLogprobs({
          inputIds,
          sampling,
          count: PROBE_TOP,
          requestId: `ratchet-logprob-probe/${prompt}/${what}/${Date.now()}`,
          signal,
        });
      observations.push({
        plain: await ask('plain', DEFAULT_SAMPLING),
        tempered: await ask('tempered', { ...DEFAULT_SAMPLING, temperature: PROBE_TEMPERATURE }),
        truncated: await ask('truncated', { ...DEFAULT_SAMPLING, topK: PROBE_TOP_K }),
      });
    }
  } catch (error) {
    if (error instanceof PolicyUnavailable || signal?.aborted) throw error;
    return { ...UNPROBED, evidence: `the probe failed: ${(error as Error).message}` };
  }
  return judgeServedLogprobs(observations);
}

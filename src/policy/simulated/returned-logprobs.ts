import { DEFAULT_SAMPLING, needsProcessedLogprobs, type SamplingParameters } from '../../trajectory/sampling.js';
import { candidateLogits, processedLogprobs } from './token-distribution.js';

/** What a simulated server's logprobs are of: `processed` (the sampling distribution) or `raw` (the model's own). */
export type LogprobsMode = 'processed' | 'raw';

/** [logprob, token id] of a position's most probable candidates, most probable first. */
export type TopCandidates = [number, number][];

// vLLM's floor for a removed token (−∞ is not JSON).
const REMOVED = -9999;

/**
 * The logprobs a simulated server returns for its written tokens, from the untempered logprob drawn for each. A
 * `raw` server returns those whatever the sampling; a `processed` one those of the sampling distribution (the same
 * numbers at the seed's sampling). With `top` > 0, each position's `top` most probable candidates too.
 */
export function returnedLogprobs(
  ids: readonly number[],
  drawn: readonly number[],
  sampling: SamplingParameters,
  mode: LogprobsMode,
  top: number,
): { logprobs: number[]; top?: TopCandidates[] } {
  const returned = mode === 'processed' ? sampling : DEFAULT_SAMPLING;
  const logprobs = needsProcessedLogprobs(returned) ? drawn.map((raw) => processedLogprobs(candidateLogits(raw), returned)[0]!) : [...drawn];
  if (top <= 0) return { logprobs };
  return {
    logprobs,
    top: ids.map((id, position) =>
      processedLogprobs(candidateLogits(drawn[position]!), returned)
        .map((logprob, candidate): [number, number] => [Math.max(REMOVED, logprob), candidateId(id, candidate)])
        .sort((a, b) => b[0] - a[0])
        .slice(0, top),
    ),
  };
}

/** Alternatives take the ids after the written one: any valid ids do, they are never written. */
function candidateId(written: number, candidate: number): number {
  return candidate === 0 ? written : (written + candidate) % 150_000;
}

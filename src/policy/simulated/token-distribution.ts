import type { SamplingParameters } from '../../trajectory/sampling.js';

/** Alternatives to the written token at each position, their logits STEP apart. */
const ALTERNATIVES = 63;
const STEP = 0.1;
const ALTERNATIVE_MASS = Array.from({ length: ALTERNATIVES }, (_, i) => Math.exp(-(i + 1) * STEP)).reduce((a, b) => a + b, 0);
/** Keeps the alternatives' logits finite (JSON has no −∞) when the written token has all the mass. */
const MAX_OFFSET = 40;

/**
 * The simulated model's logits at one position: the token it writes first (logit 0, always the most probable, so
 * no truncation ever removes it), then the alternatives, placed so that untempered the written token has
 * probability e^rawLogprob. So at temperature 1 with nothing truncated its logprob is the one drawn, and every
 * other sampling reshapes one consistent distribution.
 */
export function candidateLogits(rawLogprob: number): number[] {
  const rest = (1 / Math.exp(rawLogprob) - 1) / ALTERNATIVE_MASS;
  const offset = rest <= 0 ? MAX_OFFSET : Math.min(MAX_OFFSET, Math.max(0, -Math.log(rest)));
  return [0, ...Array.from({ length: ALTERNATIVES }, (_, i) => -(offset + (i + 1) * STEP))];
}

/**
 * Log-probabilities of the candidates under the sampling distribution, in vLLM's order: temperature, then min-p,
 * top-k and top-p, each renormalising what is left (a removed candidate is −∞). Greedy decoding returns the
 * untempered distribution, as both servers do. A repetition penalty changes nothing: the candidates are abstract.
 */
export function processedLogprobs(logits: readonly number[], sampling: SamplingParameters): number[] {
  if (sampling.temperature === 0) return logSoftmax(logits);
  let scaled = logits.map((z) => z / sampling.temperature);
  if (sampling.minP > 0) {
    const probs = softmax(scaled);
    const floor = sampling.minP * Math.max(...probs);
    scaled = scaled.map((z, i) => (probs[i]! < floor ? -Infinity : z));
  }
  if (sampling.topK !== -1) {
    const kth = [...scaled].sort((a, b) => b - a)[Math.min(sampling.topK, scaled.length) - 1]!;
    scaled = scaled.map((z) => (z < kth ? -Infinity : z));
  }
  if (sampling.topP < 1) scaled = topP(scaled, sampling.topP);
  return logSoftmax(scaled);
}

/** vLLM's rule: ascending, a candidate goes while the mass up to and including it is at most 1 − p; the top one stays. */
function topP(logits: number[], p: number): number[] {
  const probs = softmax(logits);
  const ascending = probs.map((prob, i) => ({ prob, i })).sort((a, b) => a.prob - b.prob);
  const kept = [...logits];
  let mass = 0;
  for (const [rank, { prob, i }] of ascending.entries()) {
    mass += prob;
    if (mass <= 1 - p && rank < ascending.length - 1) kept[i] = -Infinity;
  }
  return kept;
}

function softmax(logits: readonly number[]): number[] {
  return logSoftmax(logits).map(Math.exp);
}

function logSoftmax(logits: readonly number[]): number[] {
  const max = Math.max(...logits);
  const total = max + Math.log(logits.reduce((sum, z) => sum + Math.exp(z - max), 0));
  return logits.map((z) => z - total);
}

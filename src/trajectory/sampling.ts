/**
 * The distribution every output token is sampled from. Every field is sent on every generate request: vLLM and
 * SGLang fill an unset one from the model's generation_config.json (a Qwen3 checkpoint ships top_p 0.95, top_k 20),
 * and a trainer must know the distribution its behaviour logprobs are of. Stored and exported with the trajectory.
 * Pure: the workflow imports it.
 */
export interface SamplingParameters {
  /** 0 is greedy decoding. */
  temperature: number;
  /** Nucleus sampling: the smallest set of tokens holding this much probability; 1 is off. */
  topP: number;
  /** The k most probable tokens only; -1 is off (every token). */
  topK: number;
  /** Tokens at least this fraction as probable as the most probable one; 0 is off. */
  minP: number;
  /** Logits of tokens already in the context divided (positive) or multiplied (negative) by it; 1 is off. */
  repetitionPenalty: number;
}

/** The seed's sampling: temperature 1 and nothing else, the model's own distribution. */
export const DEFAULT_SAMPLING: Readonly<SamplingParameters> = { temperature: 1, topP: 1, topK: -1, minP: 0, repetitionPenalty: 1 };

/**
 * The sampling parameters among resolved rollout options. Options resolved by an earlier release hold only
 * `temperature`: the others take the seed's values, which this release sends explicitly.
 */
export function samplingOf(options: Partial<SamplingParameters>): SamplingParameters {
  return {
    temperature: options.temperature ?? DEFAULT_SAMPLING.temperature,
    topP: options.topP ?? DEFAULT_SAMPLING.topP,
    topK: options.topK ?? DEFAULT_SAMPLING.topK,
    minP: options.minP ?? DEFAULT_SAMPLING.minP,
    repetitionPenalty: options.repetitionPenalty ?? DEFAULT_SAMPLING.repetitionPenalty,
  };
}

/** Greedy decoding: the servers ignore top-p, top-k and min-p then (vLLM resets them, SGLang sets top_k 1). */
export function isGreedy(sampling: SamplingParameters): boolean {
  return sampling.temperature === 0;
}

/** Top-p, top-k or min-p cut the distribution and renormalise what is left (never when greedy). */
export function truncates(sampling: SamplingParameters): boolean {
  return !isGreedy(sampling) && (sampling.topP < 1 || sampling.topK !== -1 || sampling.minP > 0);
}

/** Temperature or a repetition penalty reshapes the logits before sampling (greedy decoding uses neither's scale). */
export function reshapesLogits(sampling: SamplingParameters): boolean {
  return (!isGreedy(sampling) && sampling.temperature !== 1) || sampling.repetitionPenalty !== 1;
}

/**
 * Raw and processed logprobs differ for this sampling. They agree for the model's own distribution (T = 1, nothing
 * truncated, no penalty) and for greedy decoding, where both are the untempered distribution's.
 */
export function needsProcessedLogprobs(sampling: SamplingParameters): boolean {
  return reshapesLogits(sampling) || truncates(sampling);
}

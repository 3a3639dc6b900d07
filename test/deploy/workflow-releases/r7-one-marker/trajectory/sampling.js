/** The seed's sampling: temperature 1 and nothing else, the model's own distribution. */
export const DEFAULT_SAMPLING = { temperature: 1, topP: 1, topK: -1, minP: 0, repetitionPenalty: 1 };
/**
 * The sampling parameters among resolved rollout options. Options resolved by an earlier release hold only
 * `temperature`: the others take the seed's values, which this release sends explicitly.
 */
export function samplingOf(options) {
    return {
        temperature: options.temperature ?? DEFAULT_SAMPLING.temperature,
        topP: options.topP ?? DEFAULT_SAMPLING.topP,
        topK: options.topK ?? DEFAULT_SAMPLING.topK,
        minP: options.minP ?? DEFAULT_SAMPLING.minP,
        repetitionPenalty: options.repetitionPenalty ?? DEFAULT_SAMPLING.repetitionPenalty,
    };
}
/** Greedy decoding: the servers ignore top-p, top-k and min-p then (vLLM resets them, SGLang sets top_k 1). */
export function isGreedy(sampling) {
    return sampling.temperature === 0;
}
/** Top-p, top-k or min-p cut the distribution and renormalise what is left (never when greedy). */
export function truncates(sampling) {
    return !isGreedy(sampling) && (sampling.topP < 1 || sampling.topK !== -1 || sampling.minP > 0);
}
/** Temperature or a repetition penalty reshapes the logits before sampling (greedy decoding uses neither's scale). */
export function reshapesLogits(sampling) {
    return (!isGreedy(sampling) && sampling.temperature !== 1) || sampling.repetitionPenalty !== 1;
}
/**
 * Raw and processed logprobs differ for this sampling. They agree for the model's own distribution (T = 1, nothing
 * truncated, no penalty) and for greedy decoding, where both are the untempered distribution's.
 */
export function needsProcessedLogprobs(sampling) {
    return reshapesLogits(sampling) || truncates(sampling);
}
//# sourceMappingURL=sampling.js.map
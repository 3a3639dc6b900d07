import type { SamplingParameters } from '../trajectory/sampling.js';

/**
 * The sampling fields of vLLM's completions request and of SGLang's `sampling_params`, which share their names.
 * Every field a server would otherwise fill from the model's generation_config.json is sent (vLLM:
 * `ModelConfig.get_diff_sampling_param`; SGLang: `get_default_sampling_params`). Presence and frequency penalties
 * are not options and always 0: both count only the tokens of the current request, which a turn resumed after a
 * weight update splits in two.
 */
export function samplingFields(sampling: SamplingParameters): Record<string, number> {
  return {
    temperature: sampling.temperature,
    top_p: sampling.topP,
    top_k: sampling.topK,
    min_p: sampling.minP,
    repetition_penalty: sampling.repetitionPenalty,
    presence_penalty: 0,
    frequency_penalty: 0,
  };
}

import { z } from 'zod';
import type { SamplingParameters } from '../../trajectory/sampling.js';

/**
 * SamplingParams (SGLang sampling_params.py): its defaults when a field is unset, and the ranges its `verify` checks,
 * in its words. The penalties are checked and accepted, but change nothing: the simulated candidates are abstract.
 */
const samplingParams = z
  .object({
    max_new_tokens: z.number().int().nonnegative().default(128),
    temperature: z.number().min(0, 'temperature must be a non-negative finite number').default(1),
    top_p: z.number().gt(0, 'top_p must be in (0, 1]').max(1, 'top_p must be in (0, 1]').default(1),
    top_k: z
      .number()
      .int()
      .refine((k) => k === -1 || k >= 1, 'top_k must be -1 (disable) or at least 1')
      .default(-1),
    min_p: z.number().min(0, 'min_p must be in [0, 1]').max(1, 'min_p must be in [0, 1]').default(0),
    repetition_penalty: z.number().gt(0, 'repetition_penalty must be in (0, 2]').max(2, 'repetition_penalty must be in (0, 2]').default(1),
    presence_penalty: z.number().min(-2).max(2).default(0),
    frequency_penalty: z.number().min(-2).max(2).default(0),
  })
  .passthrough();

/** GenerateReqInput (SGLang io_struct.py), the fields the simulated policy serves. */
export const generateRequest = z
  .object({
    input_ids: z.array(z.number().int().nonnegative()).min(1),
    sampling_params: samplingParams.prefault({}),
    return_logprob: z.boolean().optional(),
    /** Per output token, this many most probable candidates in `meta_info.output_top_logprobs` (with return_logprob). */
    top_logprobs_num: z.number().int().nonnegative().default(0),
    /** With return_logprob, 0 scores the input from its first token (`meta_info.input_token_logprobs`); -1: none. */
    logprob_start_len: z.number().int().default(-1),
    stream: z.boolean().optional(),
    rid: z.string().min(1).optional(),
  })
  .passthrough();

/** The request's sampling parameters in Ratchet's terms. */
export function wireSampling(params: z.output<typeof samplingParams>): SamplingParameters {
  return {
    temperature: params.temperature,
    topP: params.top_p,
    topK: params.top_k,
    minP: params.min_p,
    repetitionPenalty: params.repetition_penalty,
  };
}

/** UpdateWeightFromDiskReqInput: `model_path` is required; `weight_version` is a string, as in SGLang. */
export const updateWeightsRequest = z
  .object({
    model_path: z.string(),
    load_format: z.string().nullish(),
    abort_all_requests: z.boolean().default(false),
    weight_version: z.string().nullish(),
  })
  .passthrough();

/** AbortReq: `rid` (empty aborts nothing) or `abort_all`. */
export const abortRequest = z.object({ rid: z.string().default(''), abort_all: z.boolean().default(false) }).passthrough();

/** SGLang's FINISH_* reasons as they appear in `meta_info.finish_reason`. */
export type WireFinishReason =
  { type: 'stop'; matched: number } | { type: 'length'; length: number } | { type: 'abort'; message: string; status_code: null; err_type: null };

/** The context-length check of SGLang's tokenizer manager, with its message. */
export function contextTooLong(inputLength: number, maxNewTokens: number, contextWindow: number): string | undefined {
  if (inputLength + maxNewTokens <= contextWindow) return undefined;
  return `Requested token count exceeds the model's maximum context length of ${contextWindow} tokens. You requested a total of ${inputLength + maxNewTokens} tokens: ${inputLength} tokens from the input messages and ${maxNewTokens} tokens for the completion.`;
}

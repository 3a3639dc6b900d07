import { z } from 'zod';

/** GenerateReqInput (SGLang io_struct.py), the fields the simulated policy serves. */
export const generateRequest = z.object({
  input_ids: z.array(z.number().int().nonnegative()).min(1),
  sampling_params: z.object({ max_new_tokens: z.number().int().nonnegative().default(128), temperature: z.number().min(0).optional() }).passthrough().default({ max_new_tokens: 128 }),
  return_logprob: z.boolean().optional(),
  stream: z.boolean().optional(),
  rid: z.string().min(1).optional(),
}).passthrough();

/** UpdateWeightFromDiskReqInput: `model_path` is required; `weight_version` is a string, as in SGLang. */
export const updateWeightsRequest = z.object({
  model_path: z.string(),
  load_format: z.string().nullish(),
  abort_all_requests: z.boolean().default(false),
  weight_version: z.string().nullish(),
}).passthrough();

/** AbortReq: `rid` (empty aborts nothing) or `abort_all`. */
export const abortRequest = z.object({ rid: z.string().default(''), abort_all: z.boolean().default(false) }).passthrough();

/** SGLang's FINISH_* reasons as they appear in `meta_info.finish_reason`. */
export type WireFinishReason =
  | { type: 'stop'; matched: number }
  | { type: 'length'; length: number }
  | { type: 'abort'; message: string; status_code: null; err_type: null };

/** The context-length check of SGLang's tokenizer manager, with its message. */
export function contextTooLong(inputLength: number, maxNewTokens: number, contextWindow: number): string | undefined {
  if (inputLength + maxNewTokens <= contextWindow) return undefined;
  return `Requested token count exceeds the model's maximum context length of ${contextWindow} tokens. You requested a total of ${inputLength + maxNewTokens} tokens: ${inputLength} tokens from the input messages and ${maxNewTokens} tokens for the completion.`;
}

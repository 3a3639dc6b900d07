import { z } from 'zod';
import type { FinishReason } from '../trajectory/turn.js';
import type { TokenChunk } from './inference-backend.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy-errors.js';

/**
 * One streamed `CompletionStreamResponse` of vLLM's `/v1/completions` (openai/completion/serving.py
 * `completion_stream_generator`). Each chunk carries only the new tokens (`output.token_ids` is a delta); with
 * `return_tokens_as_token_ids` each `logprobs.tokens` entry is `"token_id:<id>"` (`format_token_id_placeholder`).
 */
const completionChunk = z
  .object({
    choices: z.array(
      z
        .object({
          index: z.number().int(),
          logprobs: z
            .object({
              tokens: z.array(z.string()),
              token_logprobs: z.array(z.number().nullable()),
            })
            .passthrough()
            .nullish(),
          // vLLM's FinishReason: stop, length, abort (also `error`, which it turns into an error event instead).
          finish_reason: z.string().nullish(),
          // Only with `return_token_ids` (vLLM ≥ 0.10.2): the same ids, checked when present.
          token_ids: z.array(z.number().int()).nullish(),
        })
        .passthrough(),
    ),
    // The final usage chunk (stream_options.include_usage): `prompt_tokens_details.cached_tokens` only on a server
    // started with --enable-prompt-tokens-details (completion/serving.py `completion_stream_generator`).
    usage: z
      .object({
        prompt_tokens_details: z.object({ cached_tokens: z.number().int().nonnegative().nullish() }).passthrough().nullish(),
      })
      .passthrough()
      .nullish(),
  })
  .passthrough();

// A failure inside the stream arrives as one event: `{"error": {message, type, param, code}}` since vLLM 0.10,
// `{"object": "error", message, type, code}` before (create_streaming_error_response).
const nestedError = z.object({ error: z.object({ message: z.string(), code: z.union([z.number(), z.string()]).nullish() }).passthrough() });
const flatError = z.object({ object: z.literal('error'), message: z.string(), code: z.union([z.number(), z.string()]).nullish() });

export interface DecodedChunk {
  chunk?: TokenChunk;
  finishReason?: FinishReason;
  /** Prompt tokens served from the prefix cache, from the usage chunk that follows the finish reason. */
  cachedTokens?: number;
}

/** Decodes one vLLM stream payload into new token ids with their logprobs (vLLM reports no weight version). */
export function decodeVllmChunk(url: string, json: unknown): DecodedChunk {
  // Each error schema runs only on a payload it could accept (an object with an `error`, or `object: "error"`): on
  // every other chunk it would fail, and a failed parse is zod's costliest.
  const record = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  const failure = record?.['error'] !== undefined ? nestedError.safeParse(json) : undefined;
  const flat = record?.['object'] === 'error' ? flatError.safeParse(json) : undefined;
  if (failure?.success || flat?.success) {
    const { message, code } = failure?.success ? failure.data.error : flat!.data!;
    const status = typeof code === 'number' ? code : 500;
    if (status >= 400 && status < 500 && status !== 429) throw new PolicyRejectedRequest(url, status, message);
    throw new PolicyUnavailable(url, `error in stream (code ${code ?? 'none'}): ${message}`);
  }
  const parsed = completionChunk.safeParse(json);
  if (!parsed.success) throw new PolicyProtocolError(url, `unexpected /v1/completions chunk: ${parsed.error.message}`);
  // The usage chunk (stream_options.include_usage) has no choices.
  const choice = parsed.data.choices.find((c) => c.index === 0);
  const cached = parsed.data.usage?.prompt_tokens_details?.cached_tokens;
  if (!choice) return cached === null || cached === undefined ? {} : { cachedTokens: cached };
  const tokens = choice.logprobs?.tokens ?? [];
  const logprobs = choice.logprobs?.token_logprobs ?? [];
  if (logprobs.length !== tokens.length) throw new PolicyProtocolError(url, `${tokens.length} tokens but ${logprobs.length} token_logprobs`);
  const ids = tokens.map((token) => tokenId(url, token));
  if (choice.token_ids && choice.token_ids.join() !== ids.join()) {
    throw new PolicyProtocolError(url, `token_ids ${choice.token_ids.join()} disagree with logprobs tokens ${ids.join()}`);
  }
  const values = logprobs.map((logprob, i) => {
    if (logprob === null) throw new PolicyProtocolError(url, `no logprob for output token ${ids[i]}`);
    return logprob;
  });
  return {
    ...(ids.length > 0 ? { chunk: { ids, logprobs: values } } : {}),
    ...(choice.finish_reason ? { finishReason: finishReason(url, choice.finish_reason) } : {}),
  };
}

/** The id in a `return_tokens_as_token_ids` token, `token_id:<id>`. */
export function tokenId(url: string, token: string): number {
  const match = /^token_id:(\d+)$/.exec(token);
  if (!match) throw new PolicyProtocolError(url, `token ${JSON.stringify(token)} is not "token_id:<id>": was return_tokens_as_token_ids ignored?`);
  return Number(match[1]);
}

function finishReason(url: string, reason: string): FinishReason {
  if (reason === 'stop' || reason === 'length' || reason === 'abort') return reason;
  throw new PolicyProtocolError(url, `unknown finish_reason ${reason}`);
}

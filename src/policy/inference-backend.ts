import type { SamplingParameters } from '../trajectory/sampling.js';
import type { FinishReason } from '../trajectory/turn.js';
import type { TopLogprob } from './logprob-verdict.js';

/** Newly generated tokens, as a backend streams them. */
export interface TokenChunk {
  ids: number[];
  logprobs: number[];
  /** The weight version the server reports for these tokens, when it reports one. */
  weightVersion?: number;
}

export interface StreamRequest {
  inputIds: readonly number[];
  maxNewTokens: number;
  /** Sent in full on every request: no server default applies unseen. */
  sampling: SamplingParameters;
  /** Our id for the request, so it can be aborted on the server. */
  requestId: string;
  signal?: AbortSignal;
}

/** One token generated to read the top logprobs of its position (the start-up logprob probe). */
export interface TopLogprobsRequest {
  inputIds: readonly number[];
  sampling: SamplingParameters;
  /** How many of the position's most probable tokens to return. */
  count: number;
  requestId: string;
  signal?: AbortSignal;
}

export interface StreamEnd {
  /** `abort`: the server interrupted the request (a weight update); the caller continues from the tokens so far. */
  finishReason: FinishReason;
  /**
   * Leading prompt tokens the server served from its prefix cache, as it reports them (SGLang's
   * `meta_info.cached_tokens`; vLLM's `usage.prompt_tokens_details.cached_tokens`, only when started with
   * `--enable-prompt-tokens-details`); undefined where the server reports none.
   */
  cachedTokens?: number;
}

/**
 * One inference server, token in, token out: the worker never re-tokenizes text it receives. Implementations
 * throw PolicyUnavailable (retry), PolicyRejectedRequest (do not retry) or PolicyProtocolError.
 */
export interface InferenceBackend {
  readonly kind: 'sglang' | 'vllm';
  readonly url: string;
  /** Streams one generation, calling onChunk for every batch of new tokens, in order. */
  generate(request: StreamRequest, onChunk: (chunk: TokenChunk) => void): Promise<StreamEnd>;
  /** The most probable tokens of the first generated position with their logprobs, most probable first. */
  topLogprobs(request: TopLogprobsRequest): Promise<TopLogprob[]>;
  /** Asks the server to stop a request; its stream then ends with finishReason `abort`. */
  abort(requestId: string): Promise<void>;
  health(): Promise<boolean>;
  /** Loads new weights and tags them with `version`; in-flight requests end with `abort` and are resumed by the caller. */
  updateWeights(version: number, weightsPath?: string): Promise<void>;
  /**
   * The tag of the weights the server holds, as it reports it (`updateWeights` sets it; a restarted server holds
   * its start-up weights under its own, e.g. `default`), or undefined where it keeps none or cannot be asked now.
   */
  servedWeightVersion(): Promise<string | undefined>;
  /**
   * Each position's logprob of its own token given the ones before it (the first null), at temperature 1: what the
   * weights-proof probe compares with the publisher's reference (src/policy/weights-proof.ts).
   */
  scorePrompt(inputIds: readonly number[], signal?: AbortSignal): Promise<(number | null)[]>;
  /** Whether the server serves real weights a probe can check (false: the simulated policy, which has none). */
  servesWeights(): Promise<boolean>;
  /** The longest context (input + new tokens) the server accepts. */
  contextWindow(): Promise<number>;
}

import type { Faults } from './faults.js';
import type { LogprobsMode } from './returned-logprobs.js';

export interface SimulatedPolicyConfig {
  /** Probability that a turn's answer is right: one number for every turn, or one per turn (the last repeats). */
  correctProbability: number | number[];
  /** Decode speed of one request, tokens per second. */
  tokensPerSecond: number;
  /** Mean length of the reasoning before the boxed answer, in tokens (varies ±50% per answer). */
  reasoningTokens: number;
  /** Longest context (input + new tokens) the simulated model accepts. */
  contextWindow: number;
  faults: Faults;
  /** Output tokens per streamed chunk (SGLang streams every `--stream-interval` decode steps). */
  chunkTokens?: number;
  /**
   * Stream only the new tokens in each chunk, as SGLang does with `--incremental-streaming-output`; by default
   * every chunk repeats all output ids and logprobs so far, as SGLang does without it.
   */
  incrementalStreamingOutput?: boolean;
  /** Seed for the answer and fault draws; unseeded draws differ run to run, as real sampling does. */
  seed?: number;
  /**
   * Draw each answer from the seed and the request id alone, not from the order requests arrive in: two runs
   * that send the same request ids get the same answers (the overhead benchmark compares two systems this way).
   */
  seedPerRequest?: boolean;
  /**
   * Draws each answer from its context alone (as a logprob query is): the same context gets the same answer under
   * any request id, so two trajectories whose prompts and observations agree token for token generate the same.
   */
  seedPerContext?: boolean;
  /**
   * What its logprobs are of: `processed` (default), the request's sampling distribution, as vLLM started with
   * `--logprobs-mode processed_logprobs`; `raw`, the model's own whatever the sampling, as vLLM by default.
   */
  logprobs?: LogprobsMode;
  /**
   * Capacity of its prefix cache in tokens, as vLLM's automatic prefix caching (prefix-cache.ts): a prompt that
   * extends an earlier request's prompt and output is partly cached, reported as `cached_tokens` and on `/metrics`.
   * Default DEFAULT_PREFIX_CACHE_TOKENS; 0 turns it off.
   */
  prefixCacheTokens?: number;
  /**
   * Prefill speed, prompt tokens per second: before its first token a request waits its uncached prompt tokens
   * at this speed. Default 0: prefill takes no time, cached or not.
   */
  prefillTokensPerSecond?: number;
  /**
   * Requests it runs at once, as vLLM's `--max-num-seqs` or SGLang's `--max-running-requests`: more wait in arrival
   * order until one ends (a waiting request is not yet prefilled nor looked up in the prefix cache). Default 0: no
   * limit, every request runs at `tokensPerSecond` however many there are.
   */
  maxRunningRequests?: number;
}

/** About what an 80 GB GPU holds for a 7B model's KV cache. */
export const DEFAULT_PREFIX_CACHE_TOKENS = 2_000_000;

/** How long a prompt with `uncachedTokens` not in the prefix cache takes to prefill, in ms. */
export function prefillMs(config: SimulatedPolicyConfig, uncachedTokens: number): number {
  const speed = config.prefillTokensPerSecond ?? 0;
  return speed > 0 ? (uncachedTokens / speed) * 1000 : 0;
}

export const DEFAULT_SIMULATED_POLICY: Omit<SimulatedPolicyConfig, 'faults'> = {
  correctProbability: [0.4, 0.55, 0.7],
  tokensPerSecond: 4000,
  reasoningTokens: 120,
  contextWindow: 131_072,
  chunkTokens: 8,
};

export function correctProbabilityAt(config: SimulatedPolicyConfig, turn: number): number {
  const p = config.correctProbability;
  if (typeof p === 'number') return p;
  return p[Math.min(turn, p.length - 1)] ?? 0.5;
}

/** mulberry32: a tiny seeded generator, so a seeded simulated policy replays the same answers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A generator for one request: the seed mixed with an FNV-1a hash of the request id. */
export function requestRandom(seed: number, requestId: string): () => number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < requestId.length; i++) hash = Math.imul(hash ^ requestId.charCodeAt(i), 0x01000193);
  return seededRandom((seed ^ hash) >>> 0);
}

/** A generator for a context: a real model computes the same distribution at the same context every time. */
export function contextRandom(inputIds: readonly number[]): () => number {
  let hash = 0x811c9dc5;
  for (const id of inputIds) hash = Math.imul(hash ^ id, 0x01000193);
  return seededRandom(hash >>> 0);
}

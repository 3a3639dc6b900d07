/** What the simulated policy did with one `/generate` request, so a test can compare it with what a client got. */
export interface SimulatedRequestRecord {
  rid: string;
  stream: boolean;
  inputIds: number[];
  /** The tokens that reached the client, with their logprobs. */
  sentIds: number[];
  sentLogprobs: number[];
  /** How it ended, once it has: `disconnect` when the client went away, `drop` for the injected fault. */
  end?: 'stop' | 'length' | 'abort' | 'disconnect' | 'drop' | 'error' | 'hang' | 'rejected';
  /** Leading prompt tokens found in the prefix cache, once it was scheduled. */
  cachedTokens?: number;
  /** When it arrived, started running (past `maxRunningRequests`' queue) and ended (`performance.now()` of the server's process). */
  arrivedMs: number;
  scheduledMs?: number;
  endedMs?: number;
}

/** Counters a test reads to see what the server really did. */
export interface SimulatedPolicyStats {
  requests: number;
  completed: number;
  /** Tokens actually sent to clients. */
  generatedTokens: number;
  /** Streams ended by `/abort_request` or a weight update. */
  aborted: number;
  inFlight: number;
  /** Prompt tokens of the requests it started generating for (vLLM's `prompt_tokens_total`). */
  promptTokens: number;
  /** Prompt tokens looked up in the prefix cache, and those found there (none while it is off), as vLLM counts them. */
  prefixCacheQueries: number;
  prefixCacheHits: number;
  faults: Record<string, number>;
  weightVersion: number;
  /** The latest requests, oldest first (at most RECENT_REQUESTS). */
  recent: SimulatedRequestRecord[];
}

const RECENT_REQUESTS = 64;

export function emptyStats(): SimulatedPolicyStats {
  return {
    requests: 0,
    completed: 0,
    generatedTokens: 0,
    aborted: 0,
    inFlight: 0,
    promptTokens: 0,
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    faults: {},
    weightVersion: 0,
    recent: [],
  };
}

/** Starts the record of a request, keeping only the latest few so a long-running server stays small. */
export function recordRequest(
  stats: SimulatedPolicyStats,
  record: Omit<SimulatedRequestRecord, 'sentIds' | 'sentLogprobs' | 'arrivedMs'>,
): SimulatedRequestRecord {
  const full: SimulatedRequestRecord = { ...record, sentIds: [], sentLogprobs: [], arrivedMs: performance.now() };
  stats.recent.push(full);
  if (stats.recent.length > RECENT_REQUESTS) stats.recent.shift();
  return full;
}

import type http from 'node:http';
import type { SimulatedGeneration } from './generation.js';
import type { LiveStream } from './live-streams.js';
import type { WireFinishReason } from './protocol.js';

export interface StreamPlan {
  generation: SimulatedGeneration;
  promptTokens: number;
  /** Leading prompt tokens found in the prefix cache (SGLang's `meta_info.cached_tokens`). */
  cachedTokens: number;
  chunkTokens: number;
  tokensPerSecond: number;
  /** The wait before the first token: injected latency and prefill. */
  latencyMs: number;
  incremental: boolean;
  /** Drop fault: destroy the socket after this many chunks. */
  dropAfterChunks?: number;
  /** The weight version now: each chunk reports the version it was generated under. */
  version(): number;
  decode(ids: number[]): string;
  /** Called as tokens reach the client (never for tokens the client did not get). */
  onSent(ids: number[], logprobs: number[]): void;
}

export type StreamOutcome = 'stop' | 'length' | 'abort' | 'disconnect' | 'drop';

/**
 * Streams one generation the way SGLang's `/generate` does with `stream: true` (http_server.py): `data: <json>`
 * events, `chunkTokens` tokens each, paced at the decode speed, the finish reason on the last, then
 * `data: [DONE]`. An abort (abort_request, weight update) ends the stream after the tokens already sent with
 * finish_reason `abort`; a closed connection stops generation.
 */
export async function streamGeneration(response: http.ServerResponse, plan: StreamPlan, live: LiveStream): Promise<StreamOutcome> {
  const { outputIds, logprobs } = plan.generation;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
  // An abort during the latency falls through: the loop below sends the abort chunk with no tokens.
  if (!(await paced(plan.latencyMs, response, live)) && !live.abort.signal.aborted) return 'disconnect';
  let sent = 0;
  // Chunks are due on a fixed schedule, so the time spent building and writing one does not slow decoding.
  const decodeStart = performance.now();
  for (let chunk = 0; sent < outputIds.length; chunk++) {
    const count = Math.min(plan.chunkTokens, outputIds.length - sent);
    const due = decodeStart + ((sent + count) / plan.tokensPerSecond) * 1000;
    if (!(await paced(Math.max(0, due - performance.now()), response, live))) {
      if (!live.abort.signal.aborted) return 'disconnect';
      break;
    }
    if (plan.dropAfterChunks !== undefined && chunk >= plan.dropAfterChunks) {
      response.socket?.destroy();
      return 'drop';
    }
    const end = sent + count;
    const finish = end === outputIds.length ? plan.generation.finishReason : null;
    write(response, chunkBody(plan, sent, end, finish));
    plan.onSent(outputIds.slice(sent, end), logprobs.slice(sent, end));
    sent = end;
  }
  if (sent < outputIds.length) {
    const reason = String(live.abort.signal.reason ?? 'aborted');
    write(response, chunkBody(plan, sent, sent, { type: 'abort', message: reason, status_code: null, err_type: null }));
  }
  if (!response.destroyed) response.end('data: [DONE]\n\n');
  return sent < outputIds.length ? 'abort' : plan.generation.finishReason.type;
}

/** SGLang's `out_dict` for one chunk: cumulative over tokens [0, end) by default, or just [start, end). */
function chunkBody(plan: StreamPlan, start: number, end: number, finish: WireFinishReason | SimulatedGeneration['finishReason'] | null): unknown {
  const from = plan.incremental ? start : 0;
  const ids = plan.generation.outputIds.slice(from, end);
  return {
    text: ids.length > 0 ? plan.decode(ids) : '',
    output_ids: ids,
    meta_info: {
      finish_reason: finish,
      prompt_tokens: plan.promptTokens,
      completion_tokens: end,
      cached_tokens: plan.cachedTokens,
      output_token_logprobs: ids.map((id, i) => [plan.generation.logprobs[from + i], id, null]),
      ...(plan.generation.topLogprobs
        ? { output_top_logprobs: plan.generation.topLogprobs.slice(from, end).map((top) => top.map(([logprob, id]) => [logprob, id, null])) }
        : {}),
      weight_version: String(plan.version()),
    },
  };
}

function write(response: http.ServerResponse, body: unknown): void {
  if (!response.destroyed) response.write(`data: ${JSON.stringify(body)}\n\n`);
}

/** Waits `ms`; false when the client went away or the request was aborted first. */
function paced(ms: number, response: http.ServerResponse, live: LiveStream): Promise<boolean> {
  if (response.destroyed || live.abort.signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const settle = (finished: boolean) => {
      clearTimeout(timer);
      response.off('close', onStop);
      live.abort.signal.removeEventListener('abort', onStop);
      resolve(finished);
    };
    const onStop = () => settle(false);
    const timer = setTimeout(() => settle(true), ms);
    response.once('close', onStop);
    live.abort.signal.addEventListener('abort', onStop, { once: true });
  });
}

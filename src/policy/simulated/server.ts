import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import { drawFault, faultSchema, type Faults } from './faults.js';
import { AnswerBook, simulateGeneration, type SimulatedGeneration } from './generation.js';
import { LiveStreams } from './live-streams.js';
import { emptyStats, recordRequest, type SimulatedPolicyStats, type SimulatedRequestRecord } from './policy-stats.js';
import { contextRandom, DEFAULT_PREFIX_CACHE_TOKENS, prefillMs, requestRandom, seededRandom, type SimulatedPolicyConfig } from './policy-config.js';
import { PrefixCache } from './prefix-cache.js';
import { prometheusText, SIMULATED_MODEL_NAME } from './prometheus-metrics.js';
import { abortRequest, contextTooLong, generateRequest, updateWeightsRequest, wireSampling } from './protocol.js';
import { readBody, reply, sleepUnlessClosed } from './http-io.js';
import { streamGeneration } from './stream-response.js';

export type { SimulatedPolicyStats, SimulatedRequestRecord };

export interface RunningSimulatedPolicy {
  url: string;
  stats(): SimulatedPolicyStats;
  setFaults(faults: Partial<Faults>): void;
  /**
   * Calls `listener` with the record of every `/generate` request as it ends (completed, aborted, failed or cut
   * off), tokens included, until the returned function is called: what a benchmark reads per request (the bench
   * of turn affinity: which server served which turn, its cached tokens, how long it held the server).
   */
  onRequestEnd(listener: (record: SimulatedRequestRecord) => void): () => void;
  close(): Promise<void>;
}

/**
 * The simulated policy: an honest stand-in for a GPU inference server. It speaks SGLang's native protocol
 * (`POST /generate` with `input_ids`, `sampling_params`, `return_logprob`, `stream`, `rid`; `/abort_request`;
 * `/update_weights_from_disk`), answers with real tokenizer tokens after a delay set by its decode speed, and
 * injects faults on request (`POST /ratchet/faults`). A prefix cache like vLLM's (prefix-cache.ts) remembers the
 * prompts and outputs it served: a prompt's cached tokens are reported in `meta_info.cached_tokens` and on
 * `GET /metrics` as vLLM's `vllm:prefix_cache_*` counters, and only its uncached tokens cost prefill time.
 */
export async function startSimulatedPolicy(
  tokenizer: ModelTokenizer,
  book: AnswerBook,
  config: SimulatedPolicyConfig,
  listen: { host?: string; port?: number } = {},
): Promise<RunningSimulatedPolicy> {
  const random = config.seed === undefined ? Math.random : seededRandom(config.seed);
  let faults = config.faults;
  const stats = emptyStats();
  const live = new LiveStreams();
  const endListeners = new Set<(record: SimulatedRequestRecord) => void>();
  const batch = new RunningRequests(config.maxRunningRequests ?? 0);
  const prefixCache = new PrefixCache(config.prefixCacheTokens ?? DEFAULT_PREFIX_CACHE_TOKENS);

  const server = http.createServer((request, response) => {
    void route(request, response).catch((error: Error) => {
      // Mid-stream the status is already sent: cut the connection, as a crashing server would.
      if (response.headersSent) response.destroy();
      else reply(response, 500, { error: { message: error.message } });
    });
  });

  async function route(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && (path === '/health' || path === '/health_generate')) return reply(response, faults.unhealthy ? 503 : 200, {});
    if (request.method === 'GET' && path === '/get_model_info') {
      return reply(response, 200, {
        model_path: SIMULATED_MODEL_NAME,
        tokenizer_path: tokenizer.directory,
        is_generation: true,
        weight_version: String(stats.weightVersion),
        context_length: config.contextWindow,
      });
    }
    if (request.method === 'GET' && path === '/ratchet/stats') return reply(response, 200, stats);
    if (request.method === 'GET' && path === '/metrics') {
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      return void response.end(prometheusText(stats));
    }
    const body = await readBody(request);
    if (request.method === 'POST' && path === '/ratchet/faults') {
      const parsed = faultSchema.partial().safeParse(body);
      if (!parsed.success) return reply(response, 400, { error: { message: parsed.error.message } });
      faults = { ...faults, ...parsed.data };
      return reply(response, 200, faults);
    }
    if (request.method === 'POST' && path === '/update_weights_from_disk') return updateWeights(body, response);
    if (request.method === 'POST' && path === '/abort_request') {
      const parsed = abortRequest.safeParse(body);
      if (!parsed.success) return reply(response, 400, { error: { message: parsed.error.message } });
      if (parsed.data.abort_all) await live.abortAll('Abort all requests');
      else if (parsed.data.rid) live.abort(parsed.data.rid, `Abort request ${parsed.data.rid}`);
      return reply(response, 200, {});
    }
    if (request.method === 'POST' && path === '/generate') return generate(body, response);
    return reply(response, 404, { error: { message: `no route ${request.method} ${path}` } });
  }

  /** The checkpoint path the last weight update named: all the simulated policy's "weights" are. */
  let weightsPath = SIMULATED_MODEL_NAME;

  async function updateWeights(body: unknown, response: http.ServerResponse): Promise<void> {
    const parsed = updateWeightsRequest.safeParse(body);
    if (!parsed.success) return reply(response, 400, { error: { message: `invalid /update_weights_from_disk request: ${parsed.error.message}` } });
    // SGLang aborts before loading, so every in-flight token comes from the weights it started with.
    if (parsed.data.abort_all_requests) await live.abortAll('Abort for a weight update');
    const named = parsed.data.weight_version;
    stats.weightVersion = named && /^\d+$/.test(named) ? Number(named) : stats.weightVersion + 1;
    weightsPath = parsed.data.model_path;
    return reply(response, 200, { success: true, message: `simulated weights now at version ${stats.weightVersion}`, num_paused_requests: 0 });
  }

  async function generate(body: unknown, response: http.ServerResponse): Promise<void> {
    stats.requests += 1;
    const parsed = generateRequest.safeParse(body);
    if (!parsed.success) return reply(response, 400, { error: { message: `invalid /generate request: ${parsed.error.message}` } });
    const { input_ids: inputIds, sampling_params: sampling, stream = false, rid = `sim-${stats.requests}` } = parsed.data;
    // Scoring the input (the weights proof's probe): the simulated policy has no weights, so the logprobs are a function
    // of the checkpoint path it last "loaded", which is enough for a reload to visibly change what it serves.
    if (!stream && parsed.data.return_logprob && parsed.data.logprob_start_len === 0) {
      const scored = scoredInput(weightsPath, inputIds);
      return reply(response, 200, {
        text: '',
        output_ids: [],
        meta_info: { id: rid, input_token_logprobs: scored.map((logprob, i) => [logprob, inputIds[i], null]) },
      });
    }
    const topLogprobs = parsed.data.return_logprob ? parsed.data.top_logprobs_num : 0;
    // A logprob query (the GPU worker's probe) reads the distribution at its context, the same every time, as a real
    // model's is; drawn from the context alone, it never shifts a seeded run's answers either.
    const draws =
      topLogprobs > 0 || config.seedPerContext
        ? contextRandom(inputIds)
        : config.seedPerRequest && config.seed !== undefined
          ? requestRandom(config.seed, rid)
          : random;
    const record = recordRequest(stats, { rid, stream, inputIds });
    if (endListeners.size > 0) {
      // After the handler's own bookkeeping (the record's end is set once the response has ended).
      const ended = () => {
        record.endedMs = performance.now();
        setImmediate(() => {
          for (const listener of endListeners) listener(record);
        });
      };
      // A hung request ends when its client goes away (or close() cuts it).
      response.once('close', ended);
    }
    const tooLong = contextTooLong(inputIds.length, sampling.max_new_tokens, config.contextWindow);
    if (tooLong) {
      record.end = 'rejected';
      // SGLang raises this inside the stream generator, so a streaming client gets it as an event of a 200 answer.
      if (!stream) return reply(response, 400, { error: { message: tooLong } });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      return void response.end(`data: ${JSON.stringify({ error: { message: tooLong } })}\n\ndata: [DONE]\n\n`);
    }
    const fault = drawFault(faults, topLogprobs > 0 ? draws : random);
    if (fault !== 'none') stats.faults[fault] = (stats.faults[fault] ?? 0) + 1;
    if (fault === 'hang') return void (record.end = 'hang'); // the socket stays open until the client or close() ends it
    if (fault === 'error') {
      record.end = 'error';
      return reply(response, 503, { error: { message: 'simulated server error' } });
    }
    if (fault === 'reject') {
      record.end = 'rejected';
      return reply(response, 400, {
        object: 'error',
        message: 'simulated rejection: invalid sampling parameters',
        type: 'BadRequestError',
        param: null,
        code: 400,
      });
    }
    stats.inFlight += 1;
    await batch.enter();
    try {
      // Scheduled: vLLM finds the cached prefix and caches the prompt's blocks as it allocates them, so a request
      // arriving while this one runs shares them too.
      record.scheduledMs = performance.now();
      const prompt = cachedPrompt(inputIds);
      record.cachedTokens = prompt.cachedTokens;
      const request = { maxNewTokens: sampling.max_new_tokens, sampling: wireSampling(sampling), topLogprobs };
      const generation = simulateGeneration(tokenizer, book, config, inputIds, request, draws);
      if (stream) return await streamed(generation, prompt, fault === 'drop', record, response);
      await whole(generation, prompt, fault === 'drop', record, response);
    } finally {
      batch.leave();
      stats.inFlight -= 1;
      // Every token it computed stays cached: all it sent but the last, which was sampled and never fed back.
      if (record.sentIds.length > 1) prefixCache.insert([...inputIds, ...record.sentIds.slice(0, -1)]);
    }
  }

  /** Looks the prompt up in the prefix cache and caches it, counting as vLLM does. */
  function cachedPrompt(inputIds: number[]): PromptPrefill {
    const cachedTokens = prefixCache.lookup(inputIds);
    prefixCache.insert(inputIds);
    stats.promptTokens += inputIds.length;
    if (prefixCache.enabled) {
      stats.prefixCacheQueries += inputIds.length;
      stats.prefixCacheHits += cachedTokens;
    }
    return { promptTokens: inputIds.length, cachedTokens, prefillMs: prefillMs(config, inputIds.length - cachedTokens) };
  }

  async function streamed(
    generation: SimulatedGeneration,
    prompt: PromptPrefill,
    drop: boolean,
    record: SimulatedRequestRecord,
    response: http.ServerResponse,
  ): Promise<void> {
    const stream = live.open(record.rid);
    try {
      const chunkTokens = Math.max(1, config.chunkTokens ?? 8);
      record.end = await streamGeneration(
        response,
        {
          generation,
          promptTokens: prompt.promptTokens,
          cachedTokens: prompt.cachedTokens,
          chunkTokens,
          tokensPerSecond: config.tokensPerSecond,
          latencyMs: faults.latencyMs + prompt.prefillMs,
          incremental: config.incrementalStreamingOutput ?? false,
          ...(drop ? { dropAfterChunks: Math.floor(Math.ceil(generation.outputIds.length / chunkTokens) / 2) } : {}),
          version: () => stats.weightVersion,
          decode: (ids) => tokenizer.decodeText(ids),
          onSent: (ids, logprobs) => {
            stats.generatedTokens += ids.length;
            record.sentIds.push(...ids);
            record.sentLogprobs.push(...logprobs);
          },
        },
        stream,
      );
      if (record.end === 'stop' || record.end === 'length') stats.completed += 1;
      if (record.end === 'abort') stats.aborted += 1;
    } finally {
      live.close(stream);
    }
  }

  /** The non-streaming answer: one JSON body after the whole prefill and decode time. */
  async function whole(
    generation: SimulatedGeneration,
    prompt: PromptPrefill,
    drop: boolean,
    record: SimulatedRequestRecord,
    response: http.ServerResponse,
  ): Promise<void> {
    const decodeMs = faults.latencyMs + prompt.prefillMs + (generation.outputIds.length / config.tokensPerSecond) * 1000;
    if (!(await sleepUnlessClosed(decodeMs, response))) return void (record.end = 'disconnect');
    stats.generatedTokens += generation.outputIds.length;
    if (drop) {
      record.end = 'drop';
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"text": "');
      response.socket?.destroy();
      return;
    }
    stats.completed += 1;
    record.sentIds.push(...generation.outputIds);
    record.sentLogprobs.push(...generation.logprobs);
    record.end = generation.finishReason.type;
    reply(response, 200, {
      text: tokenizer.decodeText(generation.outputIds),
      output_ids: generation.outputIds,
      meta_info: {
        id: record.rid,
        finish_reason: generation.finishReason,
        prompt_tokens: prompt.promptTokens,
        completion_tokens: generation.outputIds.length,
        cached_tokens: prompt.cachedTokens,
        output_token_logprobs: generation.outputIds.map((id, i) => [generation.logprobs[i], id, null]),
        ...(generation.topLogprobs
          ? { output_top_logprobs: generation.topLogprobs.map((top) => top.map(([logprob, id]) => [logprob, id, null])) }
          : {}),
        weight_version: String(stats.weightVersion),
      },
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? 0, listen.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    // A snapshot of the counters; the token arrays of recent requests are shared, not copied (tests poll this often).
    stats: () => ({ ...stats, faults: { ...stats.faults }, recent: stats.recent.map((record) => ({ ...record })) }),
    setFaults: (update) => {
      faults = { ...faults, ...update };
    },
    onRequestEnd: (listener) => {
      endListeners.add(listener);
      return () => endListeners.delete(listener);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The server's batch: at most `max` requests run at once (0: no limit); the others wait in arrival order. */
class RunningRequests {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  async enter(): Promise<void> {
    if (this.max <= 0 || this.running < this.max) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the place to the longest-waiting request, if any. */
  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** A request's prompt as the prefix cache saw it. */
interface PromptPrefill {
  promptTokens: number;
  /** Leading prompt tokens found in the prefix cache. */
  cachedTokens: number;
  /** How long the uncached rest takes to prefill (0 unless `prefillTokensPerSecond` is set). */
  prefillMs: number;
}

export { AnswerBook };

/** A deterministic logprob per input position (the first null) for the simulated "weights" at `weightsPath`. */
export function scoredInput(weightsPath: string, ids: readonly number[]): (number | null)[] {
  let seed = 0;
  for (const char of weightsPath) seed = (seed * 31 + char.charCodeAt(0)) >>> 0;
  return ids.map((id, i) => (i === 0 ? null : -0.5 - (((seed ^ Math.imul(id, 2654435761) ^ Math.imul(i, 40503)) >>> 0) % 1000) / 100));
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import { drawFault, faultSchema, type Faults } from './faults.js';
import { AnswerBook, simulateGeneration } from './generation.js';
import { seededRandom, type SimulatedPolicyConfig } from './policy-config.js';

const generateRequest = z.object({
  input_ids: z.array(z.number().int().nonnegative()).min(1),
  sampling_params: z.object({ max_new_tokens: z.number().int().nonnegative().default(128), temperature: z.number().min(0).optional() }).passthrough().default({ max_new_tokens: 128 }),
  return_logprob: z.boolean().optional(),
  stream: z.literal(false).optional(),
}).passthrough();

/** Counters a test reads to see what the server really did. */
export interface SimulatedPolicyStats {
  requests: number;
  completed: number;
  generatedTokens: number;
  inFlight: number;
  faults: Record<string, number>;
  weightVersion: number;
}

export interface RunningSimulatedPolicy {
  url: string;
  stats(): SimulatedPolicyStats;
  setFaults(faults: Partial<Faults>): void;
  close(): Promise<void>;
}

/**
 * The simulated policy: an honest stand-in for a GPU inference server. It speaks SGLang's native protocol
 * (`POST /generate` with `input_ids`, `sampling_params`, `return_logprob`), answers with real tokenizer
 * tokens after a delay set by its decode speed, and injects faults on request (`POST /ratchet/faults`).
 */
export async function startSimulatedPolicy(
  tokenizer: ModelTokenizer, book: AnswerBook, config: SimulatedPolicyConfig, listen: { host?: string; port?: number } = {},
): Promise<RunningSimulatedPolicy> {
  const random = config.seed === undefined ? Math.random : seededRandom(config.seed);
  let faults = config.faults;
  const stats: SimulatedPolicyStats = { requests: 0, completed: 0, generatedTokens: 0, inFlight: 0, faults: {}, weightVersion: 0 };

  const server = http.createServer((request, response) => {
    void route(request, response).catch((error: Error) => reply(response, 500, { error: { message: error.message } }));
  });

  async function route(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && (path === '/health' || path === '/health_generate')) return reply(response, 200, {});
    if (request.method === 'GET' && path === '/get_model_info') {
      return reply(response, 200, { model_path: 'ratchet/simulated-policy', tokenizer_path: tokenizer.directory, is_generation: true, weight_version: String(stats.weightVersion) });
    }
    if (request.method === 'GET' && path === '/ratchet/stats') return reply(response, 200, stats);
    const body = await readBody(request);
    if (request.method === 'POST' && path === '/ratchet/faults') {
      const parsed = faultSchema.partial().safeParse(body);
      if (!parsed.success) return reply(response, 400, { error: { message: parsed.error.message } });
      faults = { ...faults, ...parsed.data };
      return reply(response, 200, faults);
    }
    if (request.method === 'POST' && path === '/update_weights_from_disk') {
      stats.weightVersion += 1;
      return reply(response, 200, { success: true, message: `simulated weights now at version ${stats.weightVersion}`, num_paused_requests: 0 });
    }
    if (request.method === 'POST' && path === '/generate') return generate(body, response);
    return reply(response, 404, { error: { message: `no route ${request.method} ${path}` } });
  }

  async function generate(body: unknown, response: http.ServerResponse): Promise<void> {
    stats.requests += 1;
    const parsed = generateRequest.safeParse(body);
    if (!parsed.success) return reply(response, 400, { error: { message: `invalid /generate request: ${parsed.error.message}` } });
    const { input_ids: inputIds, sampling_params: sampling } = parsed.data;
    if (inputIds.length + sampling.max_new_tokens > config.contextWindow) {
      return reply(response, 400, { error: { message: `Requested token count exceeds the model's maximum context length of ${config.contextWindow} tokens. You requested a total of ${inputIds.length + sampling.max_new_tokens} tokens: ${inputIds.length} tokens from the input messages and ${sampling.max_new_tokens} tokens for the completion.` } });
    }
    const fault = drawFault(faults, random);
    if (fault !== 'none') stats.faults[fault] = (stats.faults[fault] ?? 0) + 1;
    if (fault === 'hang') return; // the socket stays open until the client or close() ends it
    if (fault === 'error') return reply(response, 503, { error: { message: 'simulated server error' } });

    stats.inFlight += 1;
    try {
      const generation = simulateGeneration(tokenizer, book, config, inputIds, sampling.max_new_tokens, random);
      const decodeMs = faults.latencyMs + (generation.outputIds.length / config.tokensPerSecond) * 1000;
      const finished = await sleepUnlessClosed(decodeMs, response);
      if (!finished) return;
      stats.generatedTokens += generation.outputIds.length;
      if (fault === 'drop') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"text": "');
        response.socket?.destroy();
        return;
      }
      stats.completed += 1;
      reply(response, 200, {
        text: tokenizer.decodeText(generation.outputIds),
        output_ids: generation.outputIds,
        meta_info: {
          id: `sim-${stats.requests}`,
          finish_reason: generation.finishReason,
          prompt_tokens: inputIds.length,
          completion_tokens: generation.outputIds.length,
          output_token_logprobs: generation.outputIds.map((id, i) => [generation.logprobs[i], id, null]),
          weight_version: String(stats.weightVersion),
        },
      });
    } finally {
      stats.inFlight -= 1;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? 0, listen.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    stats: () => structuredClone(stats),
    setFaults: (update) => { faults = { ...faults, ...update }; },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export { AnswerBook };

function reply(response: http.ServerResponse, status: number, body: unknown): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function readBody(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Waits out the decode time; false when the client went away first (its tokens are never delivered). */
function sleepUnlessClosed(ms: number, response: http.ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const onClose = () => { clearTimeout(timer); resolve(false); };
    const timer = setTimeout(() => { response.off('close', onClose); resolve(true); }, ms);
    response.once('close', onClose);
  });
}

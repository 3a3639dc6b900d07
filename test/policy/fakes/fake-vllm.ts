import type http from 'node:http';
import { z } from 'zod';
import { fakeOutput, fakePromptLogprobs, listen, pause, sendEvent, sendJson, startEvents, type FakeFault, type ServedRequest } from './fake-http.js';

/**
 * A local stand-in for a vLLM OpenAI-compatible server, answering with the shapes of vllm/entrypoints/openai:
 * streamed `CompletionStreamResponse` chunks carrying only new tokens, `logprobs.tokens` as `"token_id:<id>"`
 * with `return_tokens_as_token_ids`, finish reasons stop/length/abort, `{"error": {message, type, param, code}}`
 * error bodies, a prompt over the window refused but max_tokens capped to the room left, `/v1/models` with
 * `max_model_len` and `root`, and the dev-mode (`VLLM_SERVER_DEV_MODE=1`) endpoints
 * `/pause`, `/resume`, `/collective_rpc`, `/reset_prefix_cache`, and the RL routes `/update_weight_version`,
 * `/weight_info` (`default` until set, as after a restart). A client disconnect aborts the request.
 */
export interface FakeVllmOptions {
  maxModelLen?: number;
  outputLength?: number;
  chunkTokens?: number;
  chunkDelayMs?: number;
  devMode?: boolean;
  /**
   * As a server started with --enable-prompt-tokens-details: the usage chunk (sent with stream_options.include_usage)
   * reports `prompt_tokens_details.cached_tokens`, here the prompt's leading tokens shared with the last prompt served,
   * in whole 16-token blocks (a prefix cache's unit).
   */
  promptTokensDetails?: boolean;
  /**
   * As a server started with Ratchet's worker extension (python/ratchet_rollouts/vllm_reload.py): `ratchet_reload_weights`
   * answers, and refuses a path naming `missing` as the extension refuses a checkpoint. Without it, as vLLM answers a
   * method its worker lacks: HTTP 500 naming the attribute.
   */
  workerExtension?: boolean;
}

export const FAKE_VLLM_MODEL = 'Qwen/Qwen3-0.6B';
export const FAKE_VLLM_EOS = 151645;

// CompletionRequest: model and prompt are required; prompt may be text or token ids (one list or a batch).
const completionBody = z
  .object({
    model: z.string(),
    prompt: z.union([z.string(), z.array(z.string()), z.array(z.number().int().nonnegative()).min(1), z.array(z.array(z.number().int()))]),
    max_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).nullish(),
    logprobs: z.number().int().min(0).nullish(),
    return_tokens_as_token_ids: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    prompt_logprobs: z.number().int().min(0).nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish(), continuous_usage_stats: z.boolean().nullish() }).nullish(),
  })
  .passthrough();
const rpcBody = z.object({ method: z.string(), args: z.array(z.string()).default([]), kwargs: z.record(z.string(), z.string()).default({}) });

export async function startFakeVllm(options: FakeVllmOptions = {}) {
  const maxModelLen = options.maxModelLen ?? 4096;
  const served = new Map<string, ServedRequest>();
  const streams = new Set<AbortController>();
  const rpcCalls: Array<z.infer<typeof rpcBody>> = [];
  const devCalls: string[] = [];
  let fault: FakeFault = 'none';
  let requests = 0;
  // A restarted server may serve another name (the model directory, by default).
  let model = FAKE_VLLM_MODEL;
  let weightVersion = 'default';
  /** The checkpoint the fake "holds": what a reload loaded last (the served model at start). */
  let weights = FAKE_VLLM_MODEL;
  let lastPrompt: number[] = [];

  const server = await listen(async (request, body, response) => {
    const [path, query = ''] = (request.url ?? '').split('?');
    if (request.method === 'GET' && path === '/health') return void response.writeHead(200).end();
    if (request.method === 'GET' && path === '/v1/models') {
      return sendJson(response, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'vllm', root: model, parent: null, max_model_len: maxModelLen, permission: [] }],
      });
    }
    if (request.method === 'POST' && path === '/v1/completions') return complete(request, body, response);
    if (request.method === 'GET' && options.devMode !== false && path === '/weight_info') {
      if (fault === 'error') return error(response, 500, 'InternalServerError', 'EngineCore encountered an issue.');
      return sendJson(response, 200, { weight_version: weightVersion });
    }
    if (request.method === 'POST' && options.devMode !== false && path === '/update_weight_version') {
      const parsed = z.object({ new_version: z.string() }).safeParse(body);
      if (!parsed.success) return sendJson(response, 422, { detail: [{ type: 'missing', loc: ['body', 'new_version'], msg: 'Field required' }] });
      devCalls.push(path);
      weightVersion = parsed.data.new_version;
      return sendJson(response, 200, { success: true, new_version: weightVersion });
    }
    if (request.method === 'POST' && options.devMode !== false && ['/pause', '/resume', '/reset_prefix_cache', '/collective_rpc'].includes(path!)) {
      devCalls.push(`${path}${query ? `?${query}` : ''}`);
      if (path === '/pause' && new URLSearchParams(query).get('mode') !== 'keep') for (const stream of streams) stream.abort();
      if (path !== '/collective_rpc') return sendJson(response, 200, path === '/pause' ? { status: 'paused' } : { status: 'ok' });
      const parsed = rpcBody.safeParse(body);
      if (!parsed.success) return error(response, 400, 'BadRequestError', "Missing 'method' in request body");
      rpcCalls.push(parsed.data);
      // A real vLLM's reload_weights without weights_path fails in the worker (HTTP 500).
      if (parsed.data.method === 'reload_weights' && !parsed.data.kwargs['weights_path']) {
        return error(response, 500, 'InternalServerError', "Call to collective_rpc method failed: Worker failed with error 'no weights_path'");
      }
      if (parsed.data.method === 'ratchet_reload_weights') {
        if (!options.workerExtension)
          return error(
            response,
            500,
            'InternalServerError',
            "Call to collective_rpc method failed: Worker failed with error ''CPUWorker' object has no attribute 'ratchet_reload_weights'', please check the stack trace above for the root cause",
          );
        if (parsed.data.kwargs['weights_path']?.includes('missing')) {
          return error(
            response,
            500,
            'InternalServerError',
            `Call to collective_rpc method failed: Worker failed with error 'CheckpointRefused: ${parsed.data.kwargs['weights_path']}: not a readable directory', please check the stack trace above for the root cause`,
          );
        }
      }
      if (parsed.data.method === 'reload_weights' || parsed.data.method === 'ratchet_reload_weights')
        weights = parsed.data.kwargs['weights_path'] ?? weights;
      return sendJson(response, 200, { results: [null] });
    }
    sendJson(response, 404, { detail: 'Not Found' });
  });

  async function complete(request: http.IncomingMessage, body: unknown, response: http.ServerResponse): Promise<void> {
    const requestId = String(request.headers['x-request-id'] ?? `cmpl-${++requests}`);
    const parsed = completionBody.safeParse(body);
    const record: ServedRequest = { body: (body ?? {}) as Record<string, unknown>, sentIds: [], sentLogprobs: [] };
    served.set(requestId, record);
    if (!parsed.success) return error(response, 400, 'BadRequestError', parsed.error.message);
    const completion = parsed.data;
    if (completion.model !== model) return error(response, 404, 'NotFoundError', `The model \`${completion.model}\` does not exist.`);
    if (fault === 'error') return error(response, 500, 'InternalServerError', 'EngineCore encountered an issue.');
    const prompt = completion.prompt;
    if (typeof prompt === 'string' || typeof prompt[0] !== 'number')
      return error(response, 400, 'BadRequestError', 'the fake serves one token-id prompt');
    const promptIds = prompt as number[];
    // As vLLM 0.32 does: a prompt over the window is refused, max_tokens is capped to the room left (not refused).
    if (promptIds.length > maxModelLen) {
      return error(
        response,
        400,
        'BadRequestError',
        `This model's maximum context length is ${maxModelLen} tokens. However, your prompt contains at least ${promptIds.length} input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=${promptIds.length})`,
      );
    }
    const maxTokens = Math.min(completion.max_tokens ?? 16, maxModelLen - promptIds.length);
    if (maxTokens < 1)
      return error(response, 400, 'BadRequestError', `max_tokens must be at least 1, got ${maxTokens}. (parameter=max_tokens, value=${maxTokens})`);
    // Scoring a prompt (prompt_logprobs, not streamed): each position's {"<id>": {logprob}}, as vLLM answers it.
    if (!completion.stream && completion.prompt_logprobs !== null && completion.prompt_logprobs !== undefined) {
      const scored = fakePromptLogprobs(weights, promptIds);
      return sendJson(response, 200, {
        id: requestId,
        object: 'text_completion',
        model,
        choices: [
          {
            index: 0,
            text: '',
            finish_reason: 'length',
            prompt_logprobs: scored.map((logprob, i) =>
              logprob === null ? null : { [String(promptIds[i])]: { logprob, rank: 1, decoded_token: '' } },
            ),
          },
        ],
      });
    }
    if (!completion.stream) return error(response, 400, 'BadRequestError', 'the fake only streams');
    const output = fakeOutput(promptIds, options.outputLength ?? 40, maxTokens, FAKE_VLLM_EOS);
    let shared = 0;
    while (shared < promptIds.length && shared < lastPrompt.length && promptIds[shared] === lastPrompt[shared]) shared++;
    const cachedTokens = Math.floor(shared / 16) * 16;
    lastPrompt = promptIds;
    const abort = new AbortController();
    streams.add(abort);
    startEvents(response);
    try {
      record.end = await stream(response, output, completion, abort.signal, record, { promptTokens: promptIds.length, cachedTokens });
    } finally {
      streams.delete(abort);
    }
  }

  async function stream(
    response: http.ServerResponse,
    output: ReturnType<typeof fakeOutput>,
    completion: z.infer<typeof completionBody>,
    signal: AbortSignal,
    record: ServedRequest,
    usage: { promptTokens: number; cachedTokens: number },
  ): Promise<ServedRequest['end']> {
    let sent = 0;
    while (sent < output.ids.length) {
      if (!(await pause(options.chunkDelayMs ?? 10, response, signal))) {
        if (!signal.aborted) return 'disconnect';
        break;
      }
      if (fault === 'drop' && sent > 0) {
        response.socket?.destroy();
        return 'drop';
      }
      const end = Math.min(sent + (options.chunkTokens ?? 4), output.ids.length);
      sendEvent(response, chunk(output, sent, end, completion, end < output.ids.length ? null : output.finish));
      record.sentIds.push(...output.ids.slice(sent, end));
      record.sentLogprobs.push(...output.logprobs.slice(sent, end));
      sent = end;
    }
    if (sent < output.ids.length) sendEvent(response, chunk(output, sent, sent, completion, 'abort'));
    // completion_stream_generator's final usage chunk: no choices, after the finish reason, before [DONE].
    if (completion.stream_options?.include_usage && !response.destroyed) {
      sendEvent(response, {
        id: 'cmpl-fake',
        object: 'text_completion',
        created: 0,
        model,
        choices: [],
        system_fingerprint: 'vllm-fake',
        usage: {
          prompt_tokens: usage.promptTokens,
          total_tokens: usage.promptTokens + sent,
          completion_tokens: sent,
          ...(options.promptTokensDetails ? { prompt_tokens_details: { cached_tokens: usage.cachedTokens } } : {}),
        },
      });
    }
    if (!response.destroyed) response.end('data: [DONE]\n\n');
    return sent < output.ids.length ? 'abort' : output.finish;
  }

  function chunk(
    output: ReturnType<typeof fakeOutput>,
    start: number,
    end: number,
    completion: z.infer<typeof completionBody>,
    finish: string | null,
  ): unknown {
    const ids = output.ids.slice(start, end);
    const token = (id: number) => (completion.return_tokens_as_token_ids ? `token_id:${id}` : `<${id}>`);
    const logprobs =
      completion.logprobs === null || completion.logprobs === undefined
        ? null
        : {
            text_offset: ids.map((_, i) => i * 6),
            token_logprobs: ids.map((_, i) => output.logprobs[start + i]),
            tokens: ids.map(token),
            top_logprobs: ids.map((id, i) => ({ [token(id)]: output.logprobs[start + i] })),
          };
    return {
      id: 'cmpl-fake',
      object: 'text_completion',
      created: 0,
      model,
      choices: [
        {
          index: 0,
          text: ids.map((id) => `<${id}>`).join(''),
          logprobs,
          finish_reason: finish,
          stop_reason: null,
          prompt_token_ids: null,
          token_ids: null,
        },
      ],
      ...(finish ? { system_fingerprint: 'vllm-fake' } : {}),
    };
  }

  return {
    url: server.url,
    maxModelLen,
    served: (requestId: string) => served.get(requestId),
    rpcCalls: () => [...rpcCalls],
    devCalls: () => [...devCalls],
    setFault: (next: FakeFault) => {
      fault = next;
    },
    setModel: (next: string) => {
      model = next;
    },
    /** What a restart on its start-up weights leaves: no version tag. */
    forgetWeightVersion: () => {
      weightVersion = 'default';
    },
    close: server.close,
  };
}

/** vLLM's ErrorResponse: `{"error": {message, type, param, code}}` with the HTTP status as `code`. */
function error(response: http.ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { error: { message, type, param: null, code: status } });
}

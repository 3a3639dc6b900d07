import type http from 'node:http';
import { z } from 'zod';
import { fakeOutput, fakePromptLogprobs, listen, pause, sendEvent, sendJson, startEvents, type FakeFault, type ServedRequest } from './fake-http.js';

/**
 * A local stand-in for an SGLang server, answering with the shapes of sglang/srt/entrypoints/http_server.py and
 * managers/tokenizer_manager.py: streamed `/generate` chunks (cumulative by default, incremental with
 * `--incremental-streaming-output`), `meta_info.finish_reason` objects, `weight_version` strings ("default" until a
 * weight update names one), 400 ErrorResponse bodies for invalid requests, and errors raised while generating
 * sent as a `data: {"error": ...}` event of a 200 stream.
 */
export interface FakeSglangOptions {
  incremental?: boolean;
  contextLength?: number;
  outputLength?: number;
  chunkTokens?: number;
  chunkDelayMs?: number;
}

export const FAKE_SGLANG_EOS = 151645;

// GenerateReqInput: exactly one of text / input_ids / input_embeds; sampling_params a dict.
const generateBody = z
  .object({
    text: z.unknown().optional(),
    input_ids: z.array(z.number().int().nonnegative()).min(1).optional(),
    sampling_params: z
      .object({ max_new_tokens: z.number().int().nonnegative().default(128), temperature: z.number().min(0).optional() })
      .passthrough()
      .default({ max_new_tokens: 128 }),
    return_logprob: z.boolean().default(false),
    logprob_start_len: z.number().int().optional(),
    stream: z.boolean().default(false),
    rid: z.string().optional(),
  })
  .passthrough();
const updateBody = z
  .object({ model_path: z.string(), abort_all_requests: z.boolean().default(false), weight_version: z.string().nullish() })
  .passthrough();
const abortBody = z.object({ rid: z.string().default(''), abort_all: z.boolean().default(false) }).passthrough();

export async function startFakeSglang(options: FakeSglangOptions = {}) {
  const contextLength = options.contextLength ?? 4096;
  const served = new Map<string, ServedRequest>();
  const streams = new Map<string, AbortController>();
  const aborted: string[] = [];
  let weightVersion = 'default';
  /** The checkpoint the fake "holds": the model_path a weight update loaded last. */
  let weights = 'Qwen/Qwen3-0.6B';
  let fault: FakeFault = 'none';
  let healthy = true;
  let requests = 0;

  const server = await listen(async (request, body, response) => {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && path === '/health') return void response.writeHead(healthy ? 200 : 503).end();
    if (request.method === 'GET' && path === '/get_model_info') {
      return sendJson(response, 200, {
        model_path: 'Qwen/Qwen3-0.6B',
        tokenizer_path: 'Qwen/Qwen3-0.6B',
        is_generation: true,
        preferred_sampling_params: null,
        weight_version: weightVersion,
      });
    }
    if (request.method === 'GET' && path === '/v1/models') {
      return sendJson(response, 200, {
        object: 'list',
        data: [{ id: 'Qwen/Qwen3-0.6B', object: 'model', created: 0, owned_by: 'sglang', root: 'Qwen/Qwen3-0.6B', max_model_len: contextLength }],
      });
    }
    if (request.method === 'GET' && path === '/get_server_info') return sendJson(response, 200, { context_length: null, version: 'fake' });
    if (request.method === 'POST' && path === '/abort_request') {
      const parsed = abortBody.safeParse(body ?? {});
      if (!parsed.success) return validationError(response, parsed.error.message);
      aborted.push(parsed.data.rid);
      for (const [rid, stream] of streams) if (parsed.data.abort_all || rid === parsed.data.rid) stream.abort();
      return void response.writeHead(200).end();
    }
    if (request.method === 'POST' && path === '/update_weights_from_disk') {
      const parsed = updateBody.safeParse(body);
      if (!parsed.success) return validationError(response, parsed.error.message);
      if (parsed.data.model_path.includes('missing')) {
        return sendJson(response, 400, {
          success: false,
          message: `Failed to update weights: ${parsed.data.model_path} not found`,
          num_paused_requests: 0,
        });
      }
      if (parsed.data.abort_all_requests) for (const stream of streams.values()) stream.abort();
      if (parsed.data.weight_version) weightVersion = parsed.data.weight_version;
      weights = parsed.data.model_path;
      return sendJson(response, 200, { success: true, message: 'Succeeded to update model weights.', num_paused_requests: 0 });
    }
    if (request.method === 'POST' && path === '/generate') return generate(body, response);
    sendJson(response, 404, { detail: 'Not Found' });
  });

  async function generate(body: unknown, response: http.ServerResponse): Promise<void> {
    const parsed = generateBody.safeParse(body);
    if (!parsed.success) return validationError(response, parsed.error.message);
    const request = parsed.data;
    const rid = request.rid ?? `fake-${++requests}`;
    const record: ServedRequest = { body: request, sentIds: [], sentLogprobs: [] };
    served.set(rid, record);
    if (request.input_ids === undefined || request.text !== undefined)
      return validationError(response, 'Either text, input_ids or input_embeds should be provided.');
    if (fault === 'error')
      return sendJson(response, 503, { object: 'error', message: 'Service Unavailable', type: 'Service Unavailable', param: null, code: 503 });
    const maxNew = request.sampling_params.max_new_tokens;
    // Scoring a prompt (return_logprob from position 0, not streamed): meta_info.input_token_logprobs, as SGLang answers.
    if (!request.stream && request.return_logprob && request.logprob_start_len === 0) {
      const scored = fakePromptLogprobs(weights, request.input_ids);
      return sendJson(response, 200, {
        text: '',
        output_ids: [],
        meta_info: { id: rid, input_token_logprobs: scored.map((logprob, i) => [logprob, request.input_ids![i], null]) },
      });
    }
    if (!request.stream)
      return sendJson(response, 400, { object: 'error', message: 'the fake only streams', type: 'Bad Request', param: null, code: 400 });
    startEvents(response);
    if (request.input_ids.length + maxNew >= contextLength) {
      sendEvent(response, {
        error: {
          message: `Requested token count exceeds the model's maximum context length of ${contextLength} tokens. You requested a total of ${request.input_ids.length + maxNew} tokens.`,
        },
      });
      return void response.end('data: [DONE]\n\n');
    }
    const output = fakeOutput(request.input_ids, options.outputLength ?? 40, maxNew, FAKE_SGLANG_EOS);
    const abort = new AbortController();
    streams.set(rid, abort);
    try {
      record.end = await stream(response, output, request.input_ids.length, abort.signal, record);
    } finally {
      streams.delete(rid);
    }
  }

  async function stream(
    response: http.ServerResponse,
    output: ReturnType<typeof fakeOutput>,
    promptTokens: number,
    signal: AbortSignal,
    record: ServedRequest,
  ): Promise<ServedRequest['end']> {
    const step = options.chunkTokens ?? 4;
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
      const end = Math.min(sent + step, output.ids.length);
      const finish =
        end < output.ids.length ? null : output.finish === 'stop' ? { type: 'stop', matched: FAKE_SGLANG_EOS } : { type: 'length', length: end };
      sendEvent(response, chunk(output, sent, end, promptTokens, finish));
      record.sentIds.push(...output.ids.slice(sent, end));
      record.sentLogprobs.push(...output.logprobs.slice(sent, end));
      sent = end;
    }
    const abortedEarly = sent < output.ids.length;
    if (abortedEarly)
      sendEvent(response, chunk(output, sent, sent, promptTokens, { type: 'abort', message: 'Abort request', status_code: null, err_type: null }));
    if (!response.destroyed) response.end('data: [DONE]\n\n');
    return abortedEarly ? 'abort' : output.finish;
  }

  function chunk(output: ReturnType<typeof fakeOutput>, start: number, end: number, promptTokens: number, finish: unknown): unknown {
    const from = options.incremental ? start : 0;
    const ids = output.ids.slice(from, end);
    return {
      text: ids.map((id) => `<${id}>`).join(''),
      output_ids: ids,
      meta_info: {
        id: 'fake',
        finish_reason: finish,
        prompt_tokens: promptTokens,
        weight_version: weightVersion,
        num_retractions: 0,
        output_token_logprobs: ids.map((id, i) => [output.logprobs[from + i], id, null]),
        output_token_logprobs_length: end,
        completion_tokens: end,
        cached_tokens: 0,
        reasoning_tokens: 0,
      },
    };
  }

  return {
    url: server.url,
    contextLength,
    served: (rid: string) => served.get(rid),
    abortCalls: () => [...aborted],
    setFault: (next: FakeFault) => {
      fault = next;
    },
    setHealthy: (next: boolean) => {
      healthy = next;
    },
    close: server.close,
  };
}

/** SGLang's RequestValidationError handler: 400 with an ErrorResponse body. */
function validationError(response: http.ServerResponse, message: string): void {
  sendJson(response, 400, { object: 'error', message, type: 'Bad Request', param: null, code: 400 });
}

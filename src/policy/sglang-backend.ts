import { z } from 'zod';
import type { InferenceBackend, StreamEnd, StreamRequest, TokenChunk, TopLogprobsRequest } from './inference-backend.js';
import type { TopLogprob } from './logprob-verdict.js';
import { PolicyProtocolError, PolicyRejectedRequest } from './policy-errors.js';
import { answersHealthy, parseJson, requestJson } from './policy-http.js';
import { samplingFields } from './sampling-fields.js';
import { SIMULATED_MODEL_NAME } from './simulated/prometheus-metrics.js';
import { policyServerAddress } from './server-credentials.js';
import { SglangStreamDecoder } from './sglang-stream-decoder.js';
import { runTokenStream } from './token-stream.js';

// GET /get_model_info (http_server.py): model_path, tokenizer_path, is_generation, weight_version. Real SGLang does
// not report the context length here; the simulated policy does, so it is read first when present.
const modelInfo = z
  .object({
    model_path: z.string(),
    context_length: z.number().int().positive().optional(),
    weight_version: z.string().nullish(),
  })
  .passthrough();
// GET /v1/models: ModelCard(max_model_len = model_config.context_len).
const modelList = z.object({ data: z.array(z.object({ max_model_len: z.number().int().positive().nullish() }).passthrough()) }).passthrough();
// GET /get_server_info: the ServerArgs (context_length is null unless set on the command line) plus scheduler info.
const serverInfo = z.object({ context_length: z.number().int().positive().nullish() }).passthrough();
// A non-streamed /generate with top_logprobs_num: per output position, [logprob, token_id, text | null] of the top tokens.
const generateTopLogprobs = z
  .object({
    meta_info: z
      .object({ output_top_logprobs: z.array(z.array(z.tuple([z.number(), z.number().int()]).rest(z.unknown())).nullable()).min(1) })
      .passthrough(),
  })
  .passthrough();
// A non-streamed /generate with return_logprob and logprob_start_len 0: per input position [logprob | null, token_id, ...].
const generateInputLogprobs = z
  .object({
    meta_info: z.object({ input_token_logprobs: z.array(z.tuple([z.number().nullable(), z.number().int()]).rest(z.unknown())).min(1) }).passthrough(),
  })
  .passthrough();
// POST /update_weights_from_disk answers {success, message, num_paused_requests}: 200 on success, 400 otherwise.
const updateResult = z.object({ success: z.boolean(), message: z.string().default('') }).passthrough();

/**
 * SGLang's native API, token in and token out: `POST /generate` with `input_ids` and `stream: true`, `rid` set to
 * our request id so `/abort_request` can stop it. The simulated policy speaks the same protocol.
 */
export class SglangBackend implements InferenceBackend {
  readonly kind = 'sglang' as const;
  readonly url: string;
  /** `Authorization` for a server started with `--api-key`: sent on every request, never part of a message. */
  private readonly headers: Record<string, string>;
  private contextLength: Promise<number> | undefined;

  constructor(url: string, options: { apiKey?: string } = {}) {
    ({ url: this.url, headers: this.headers } = policyServerAddress(url, options.apiKey));
  }

  async generate(request: StreamRequest, onChunk: (chunk: TokenChunk) => void): Promise<StreamEnd> {
    const url = `${this.url}/generate`;
    const decoder = new SglangStreamDecoder(url);
    try {
      const finishReason = await runTokenStream({
        url,
        // GenerateReqInput (io_struct.py); `return_text_in_logprobs` defaults to false, so entries carry no text.
        body: {
          input_ids: [...request.inputIds],
          sampling_params: { max_new_tokens: request.maxNewTokens, ...samplingFields(request.sampling) },
          return_logprob: true,
          stream: true,
          rid: request.requestId,
        },
        headers: this.headers,
        signal: request.signal,
        onData: (data) => {
          const decoded = decoder.decode(parseJson(url, data));
          for (const chunk of decoded.chunks) onChunk(chunk);
          return decoded.finishReason;
        },
      });
      const { cachedTokens } = decoder;
      return { finishReason, ...(cachedTokens === undefined ? {} : { cachedTokens }) };
    } catch (error) {
      // SGLang aborts a disconnected stream on its own only after 2 s (create_abort_task); free the slot now.
      if (request.signal?.aborted) this.abort(request.requestId).catch(() => undefined);
      throw error;
    }
  }

  /**
   * One token with `top_logprobs_num: count`. SGLang's logprobs are log(softmax(logits / T)) after penalties and
   * before top-p/top-k/min-p (srt/layers/sampler.py), or untempered with SGLANG_RETURN_ORIGINAL_LOGPROB set.
   */
  async topLogprobs(request: TopLogprobsRequest): Promise<TopLogprob[]> {
    const answer = await requestJson(
      `${this.url}/generate`,
      {
        method: 'POST',
        headers: this.headers,
        json: {
          input_ids: [...request.inputIds],
          sampling_params: { max_new_tokens: 1, ...samplingFields(request.sampling) },
          return_logprob: true,
          top_logprobs_num: request.count,
          stream: false,
          rid: request.requestId,
        },
      },
      generateTopLogprobs,
      30_000,
      request.signal,
    );
    const top = answer.meta_info.output_top_logprobs[0] ?? [];
    return top.map(([logprob, id]) => ({ id, logprob })).sort((a, b) => b.logprob - a.logprob);
  }

  /** `POST /abort_request {rid}`: the request's stream then ends with finish_reason `abort`. */
  async abort(requestId: string): Promise<void> {
    await requestJson(`${this.url}/abort_request`, { method: 'POST', headers: this.headers, json: { rid: requestId } }, z.unknown(), 5_000);
  }

  health(): Promise<boolean> {
    return answersHealthy(this.url, this.headers);
  }

  /**
   * `POST /update_weights_from_disk` (UpdateWeightFromDiskReqInput: model_path, load_format, abort_all_requests,
   * weight_version). `abort_all_requests` ends every in-flight request with `abort` before loading, so no token
   * mixes two versions; `weight_version` is what later chunks report in `meta_info.weight_version`.
   */
  async updateWeights(version: number, weightsPath?: string): Promise<void> {
    const modelPath =
      weightsPath ?? (await requestJson(`${this.url}/get_model_info`, { method: 'GET', headers: this.headers }, modelInfo)).model_path;
    const url = `${this.url}/update_weights_from_disk`;
    // Loading a checkpoint takes as long as the disk does; an hour bounds a wedged server, not a slow one.
    const result = await requestJson(
      url,
      {
        method: 'POST',
        headers: this.headers,
        json: { model_path: modelPath, abort_all_requests: true, weight_version: String(version) },
      },
      updateResult,
      3_600_000,
    );
    if (!result.success) throw new PolicyRejectedRequest(url, 200, `weight update to version ${version} failed: ${result.message}`);
  }

  /**
   * Scores `inputIds` as a prompt: `/generate` with `return_logprob`, `logprob_start_len: 0` and one new token at
   * temperature 1; `meta_info.input_token_logprobs` has each input position's logprob (the first null).
   */
  async scorePrompt(inputIds: readonly number[], signal?: AbortSignal): Promise<(number | null)[]> {
    const url = `${this.url}/generate`;
    const answer = await requestJson(
      url,
      {
        method: 'POST',
        headers: this.headers,
        json: { input_ids: [...inputIds], sampling_params: { max_new_tokens: 1, temperature: 1 }, return_logprob: true, logprob_start_len: 0 },
      },
      generateInputLogprobs,
      60_000,
      signal,
    );
    const positions = answer.meta_info.input_token_logprobs;
    return inputIds.map((id, i) => (i === 0 || positions[i]?.[1] !== id ? null : positions[i]![0]));
  }

  /** Real SGLang does; the simulated policy, which speaks SGLang's protocol under its own model name, does not. */
  async servesWeights(): Promise<boolean> {
    const info = await requestJson(`${this.url}/get_model_info`, { method: 'GET', headers: this.headers }, modelInfo, 10_000);
    return info.model_path !== SIMULATED_MODEL_NAME;
  }

  /** `weight_version` of `GET /get_model_info`: `default` on a server fresh from its start-up weights. */
  async servedWeightVersion(): Promise<string | undefined> {
    const info = await requestJson(`${this.url}/get_model_info`, { method: 'GET', headers: this.headers }, modelInfo, 10_000).catch(() => undefined);
    return info?.weight_version ?? undefined;
  }

  contextWindow(): Promise<number> {
    this.contextLength ??= this.readContextWindow().catch((error: unknown) => {
      this.contextLength = undefined;
      throw error;
    });
    return this.contextLength;
  }

  private async readContextWindow(): Promise<number> {
    const info = await requestJson(`${this.url}/get_model_info`, { method: 'GET', headers: this.headers }, modelInfo, 10_000);
    if (info.context_length) return info.context_length;
    const models = await requestJson(`${this.url}/v1/models`, { method: 'GET', headers: this.headers }, modelList, 10_000).catch(() => undefined);
    const fromModels = models?.data[0]?.max_model_len;
    if (fromModels) return fromModels;
    const server = await requestJson(`${this.url}/get_server_info`, { method: 'GET', headers: this.headers }, serverInfo, 10_000);
    if (server.context_length) return server.context_length;
    throw new PolicyProtocolError(this.url, 'neither /get_model_info, /v1/models nor /get_server_info reports a context length');
  }
}

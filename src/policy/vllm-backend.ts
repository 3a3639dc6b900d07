import { z } from 'zod';
import type { InferenceBackend, StreamEnd, StreamRequest, TokenChunk, TopLogprobsRequest } from './inference-backend.js';
import type { TopLogprob } from './logprob-verdict.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy-errors.js';
import { answersHealthy, failureFor, parseJson, requestJson, send } from './policy-http.js';
import { samplingFields } from './sampling-fields.js';
import { CheckpointRefused } from './weights-proof.js';
import { policyServerAddress } from './server-credentials.js';
import { runTokenStream } from './token-stream.js';
import { decodeVllmChunk, tokenId } from './vllm-stream-decoder.js';

// GET /v1/models: {object: 'list', data: [ModelCard{id, root, max_model_len, ...}]}.
const modelList = z
  .object({
    data: z
      .array(z.object({ id: z.string(), root: z.string().nullish(), max_model_len: z.number().int().positive().nullish() }).passthrough())
      .min(1),
  })
  .passthrough();

// A non-streamed completion's logprobs: per position, {"token_id:<id>": logprob} of the top tokens (and the sampled one).
const completionTopLogprobs = z
  .object({
    choices: z
      .array(
        z.object({ logprobs: z.object({ top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).min(1) }).passthrough() }).passthrough(),
      )
      .min(1),
  })
  .passthrough();

// A non-streamed completion with `prompt_logprobs: 0`: per prompt position (the first null), {"<id>": {logprob}} of
// the prompt's own token (and, where it is not the most probable, the most probable one too).
const promptLogprobs = z
  .object({
    choices: z
      .array(
        z
          .object({
            prompt_logprobs: z.array(z.record(z.string(), z.object({ logprob: z.number() }).passthrough()).nullable()),
          })
          .passthrough(),
      )
      .min(1),
  })
  .passthrough();

// GET /weight_info (rl/online/api_router.py, dev mode): {weight_version}, "default" until a version is set.
const weightInfo = z.object({ weight_version: z.string().nullish() }).passthrough();

/** The model a vLLM server serves: its name, the directory it loaded (`root`) and its context window. */
interface ServedModel {
  id: string;
  root: string;
  maxModelLen: number | undefined;
}

/**
 * vLLM's OpenAI-compatible `/v1/completions`, token in and token out: the prompt is a list of token ids (a valid
 * completions prompt), and `return_tokens_as_token_ids` makes every streamed logprob token read `token_id:<id>`,
 * so no text is ever re-tokenized. vLLM has no abort-by-id endpoint on its public API but aborts a request whose
 * client disconnects, so `abort` closes our own connection for that request.
 */
export class VllmBackend implements InferenceBackend {
  readonly kind = 'vllm' as const;
  readonly url: string;
  /** `Authorization` for a server started with `--api-key`: sent on every request, never part of a message. */
  private readonly headers: Record<string, string>;
  private model: Promise<ServedModel> | undefined;
  /** In-flight requests by our request id: aborting one ends its stream with `abort`. */
  private readonly interrupts = new Map<string, AbortController>();
  /** Whether the server has Ratchet's worker extension (`ratchet_reload_weights`); undefined until a reload asks. */
  private extension: boolean | undefined;

  constructor(url: string, options: { apiKey?: string } = {}) {
    ({ url: this.url, headers: this.headers } = policyServerAddress(url, options.apiKey));
  }

  async generate(request: StreamRequest, onChunk: (chunk: TokenChunk) => void): Promise<StreamEnd> {
    const { id: model } = await this.servedModel();
    const url = `${this.url}/v1/completions`;
    const interrupt = new AbortController();
    this.interrupts.set(request.requestId, interrupt);
    let cachedTokens: number | undefined;
    try {
      const finishReason = await runTokenStream({
        url,
        body: {
          model,
          prompt: [...request.inputIds],
          max_tokens: request.maxNewTokens,
          ...samplingFields(request.sampling),
          // 1, not 0: the sampled token's own logprob is always included, and some releases treat 0 as "off".
          logprobs: 1,
          return_tokens_as_token_ids: true,
          stream: true,
          // The usage chunk after the last choice: the prompt tokens served from the prefix cache, on a server
          // started with --enable-prompt-tokens-details (src/stack/vllm-server.ts); without it usage has none.
          stream_options: { include_usage: true },
        },
        // Names the request in vLLM's logs (used as its id with --enable-request-id-headers).
        headers: { ...this.headers, 'x-request-id': request.requestId },
        signal: request.signal,
        interrupt: interrupt.signal,
        readPastFinish: true,
        onData: (data) => {
          const decoded = decodeVllmChunk(url, parseJson(url, data));
          if (decoded.chunk) onChunk(decoded.chunk);
          if (decoded.cachedTokens !== undefined) cachedTokens = decoded.cachedTokens;
          return decoded.finishReason;
        },
      });
      return { finishReason, ...(cachedTokens === undefined ? {} : { cachedTokens }) };
    } catch (error) {
      // A server restarted on another checkpoint directory serves another model name, and answers 404 for the one
      // we cached: read /v1/models again on the next attempt instead of failing the trajectory for good.
      if (error instanceof PolicyRejectedRequest && error.status === 404) {
        this.model = undefined;
        throw new PolicyUnavailable(url, `the server no longer serves model ${model} (${error.message}); the next attempt asks /v1/models again`);
      }
      throw error;
    } finally {
      if (this.interrupts.get(request.requestId) === interrupt) this.interrupts.delete(request.requestId);
    }
  }

  /**
   * One token with `logprobs: count`. What the values mean is the server's `--logprobs-mode`: raw_logprobs (the
   * default) ignores temperature, penalties and truncation; processed_logprobs applies them (v1/sample/sampler.py).
   */
  async topLogprobs(request: TopLogprobsRequest): Promise<TopLogprob[]> {
    const { id: model } = await this.servedModel();
    const url = `${this.url}/v1/completions`;
    const answer = await requestJson(
      url,
      {
        method: 'POST',
        headers: { ...this.headers, 'x-request-id': request.requestId },
        json: {
          model,
          prompt: [...request.inputIds],
          max_tokens: 1,
          ...samplingFields(request.sampling),
          logprobs: request.count,
          return_tokens_as_token_ids: true,
        },
      },
      completionTopLogprobs,
      30_000,
      request.signal,
    );
    const top = answer.choices[0]!.logprobs.top_logprobs[0] ?? {};
    return Object.entries(top)
      .map(([token, logprob]) => ({ id: tokenId(url, token), logprob }))
      .sort((a, b) => b.logprob - a.logprob);
  }

  /** Closes our connection for the request; vLLM aborts it on disconnect, and our stream ends with `abort`. */
  async abort(requestId: string): Promise<void> {
    this.interrupts.get(requestId)?.abort();
  }

  health(): Promise<boolean> {
    return answersHealthy(this.url, this.headers);
  }

  /**
   * vLLM's documented in-place checkpoint reload is the worker method `reload_weights(weights_path=...)`
   * (docs "Layerwise weight reloading", mid-level `reload_weights` API), which the server exposes as
   * `POST /collective_rpc {"method": "reload_weights", "kwargs": {"weights_path": ...}}` when started with
   * `VLLM_SERVER_DEV_MODE=1` (serve/dev/rpc/api_router.py). A server started with Ratchet's worker extension
   * (`--worker-extension-cls ratchet_rollouts.vllm_reload.WeightReload`) is asked for `ratchet_reload_weights`
   * instead: it checks the checkpoint before touching the model (a bad one leaves the server as it was instead of
   * killing its engine) and rebuilds what a tied head derived from the old weights (python/ratchet_rollouts/
   * vllm_reload.py). Without the extension the plain reload runs, and the worker's probe finds out whether it served
   * the published weights. Around it: `POST /pause?mode=abort` ends every in-flight request with finish_reason
   * `abort` (serve/dev/rlhf/api_router.py), `/reset_prefix_cache` drops KV computed with the old weights, `/resume`
   * reopens. The reloaded weights are then tagged with `version` (`/update_weight_version`, skipped where absent),
   * which `/weight_info` reports until the server restarts. A real vLLM (0.32) fails `reload_weights` without a
   * `weights_path` (HTTP 500), so a version published without one reloads the served model's own directory (`root`
   * in /v1/models), as SGLang's backend does with model_path.
   */
  async updateWeights(version: number, weightsPath?: string): Promise<void> {
    const path = weightsPath ?? (await this.servedModel()).root;
    for (const interrupt of this.interrupts.values()) interrupt.abort();
    await this.devCall('/pause?mode=abort', undefined, { optional: true });
    try {
      await this.reload(path, version);
      await this.devCall('/reset_prefix_cache', undefined, { optional: true });
      await this.devCall('/update_weight_version', { new_version: String(version) }, { optional: true });
    } finally {
      await this.devCall('/resume', undefined, { optional: true });
    }
  }

  /**
   * Scores `inputIds` as a prompt (`prompt_logprobs: 0`, at temperature 1: the model's own distribution): each
   * position's logprob of its token given those before it, the first null.
   */
  async scorePrompt(inputIds: readonly number[], signal?: AbortSignal): Promise<(number | null)[]> {
    const { id: model } = await this.servedModel();
    const url = `${this.url}/v1/completions`;
    const answer = await requestJson(
      url,
      {
        method: 'POST',
        headers: this.headers,
        json: { model, prompt: [...inputIds], max_tokens: 1, temperature: 1, prompt_logprobs: 0 },
      },
      promptLogprobs,
      60_000,
      signal,
    );
    const positions = answer.choices[0]!.prompt_logprobs;
    return inputIds.map((id, i) => (i === 0 ? null : (positions[i]?.[String(id)]?.logprob ?? null)));
  }

  async servesWeights(): Promise<boolean> {
    return true;
  }

  /** Ratchet's checked reload where the server has the extension, vLLM's own where it has not. */
  private async reload(path: string, version: number): Promise<void> {
    if (this.extension !== false) {
      try {
        await this.devCall(
          '/collective_rpc',
          { method: 'ratchet_reload_weights', kwargs: { weights_path: path } },
          {
            optional: false,
            what: `reload weights for version ${version}`,
          },
        );
        this.extension = true;
        return;
      } catch (error) {
        const message = String((error as Error).message);
        const refused = /CheckpointRefused: (.*?)(', please check|$)/.exec(message);
        if (refused) throw new CheckpointRefused(this.url, refused[1]!);
        // vLLM answers a method its worker lacks with a 500 naming it; anything else is the reload's own failure.
        if (this.extension === true || !/has no attribute 'ratchet_reload_weights'/.test(message)) throw error;
        this.extension = false;
      }
    }
    await this.devCall(
      '/collective_rpc',
      { method: 'reload_weights', kwargs: { weights_path: path } },
      {
        optional: false,
        what: `reload weights for version ${version}`,
      },
    );
  }

  /** `weight_version` of `GET /weight_info` (dev mode): `default` on a server fresh from its start-up weights. */
  async servedWeightVersion(): Promise<string | undefined> {
    const info = await requestJson(`${this.url}/weight_info`, { method: 'GET', headers: this.headers }, weightInfo, 10_000).catch(() => undefined);
    return info?.weight_version ?? undefined;
  }

  async contextWindow(): Promise<number> {
    const { maxModelLen } = await this.servedModel();
    if (!maxModelLen) throw new PolicyProtocolError(`${this.url}/v1/models`, 'the model card has no max_model_len');
    return maxModelLen;
  }

  private servedModel(): Promise<ServedModel> {
    this.model ??= requestJson(`${this.url}/v1/models`, { method: 'GET', headers: this.headers }, modelList, 10_000)
      .then(({ data: [card] }) => ({ id: card!.id, root: card!.root ?? card!.id, maxModelLen: card!.max_model_len ?? undefined }))
      .catch((error: unknown) => {
        this.model = undefined;
        throw error;
      });
    return this.model;
  }

  /** A dev-mode endpoint; `optional` ones are skipped where the server lacks them (404). */
  private async devCall(path: string, json: unknown, options: { optional: boolean; what?: string }): Promise<void> {
    const url = `${this.url}${path}`;
    // Reloading a checkpoint takes as long as the disk does; an hour bounds a wedged server, not a slow one.
    const timeout = AbortSignal.timeout(3_600_000);
    const response = await send(url, { method: 'POST', headers: this.headers, ...(json === undefined ? {} : { json }) }, timeout).catch(
      (error: unknown) => {
        throw timeout.aborted ? new PolicyUnavailable(url, 'no answer within an hour', { cause: error }) : error;
      },
    );
    if (response.ok || (options.optional && response.status === 404)) {
      await response.body?.cancel();
      return;
    }
    const failure = await failureFor(url, response);
    if (response.status === 404) failure.message += ` (${options.what ?? path} needs a vLLM server started with VLLM_SERVER_DEV_MODE=1)`;
    throw failure;
  }
}

import { z } from 'zod';
import type { FinishReason } from '../../src/trajectory/turn.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from '../../src/policy/policy-errors.js';

export interface GenerationRequest {
  inputIds: readonly number[];
  maxNewTokens: number;
  temperature: number;
  signal?: AbortSignal;
}

export interface Generation {
  outputIds: number[];
  logprobs: number[];
  finishReason: FinishReason;
  /** The weight version the server reports (0 when it reports none). */
  weightVersion: number;
}

// SGLang's native /generate response: meta_info.output_token_logprobs is a list of (logprob, token_id, text).
const generateResponse = z
  .object({
    output_ids: z.array(z.number().int()),
    meta_info: z
      .object({
        finish_reason: z.union([z.object({ type: z.string() }).passthrough(), z.null()]),
        output_token_logprobs: z.array(z.tuple([z.number().nullable(), z.number().int()]).rest(z.unknown())),
        weight_version: z.union([z.number(), z.string()]).optional(),
      })
      .passthrough(),
  })
  .passthrough();

/** SGLang's non-streaming `/generate` (the simulated policy serves it too); production streams through SglangBackend. */
export class SglangClient {
  constructor(readonly baseUrl: string) {}

  async generate(request: GenerationRequest): Promise<Generation> {
    const url = `${this.baseUrl.replace(/\/$/, '')}/generate`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          input_ids: request.inputIds,
          sampling_params: { max_new_tokens: request.maxNewTokens, temperature: request.temperature },
          return_logprob: true,
        }),
        signal: request.signal,
      });
    } catch (error) {
      if (request.signal?.aborted) throw error;
      throw new PolicyUnavailable(url, (error as Error).cause ? String((error as Error).cause) : (error as Error).message, { cause: error });
    }
    const body = await response.text().catch((error: Error) => {
      throw new PolicyUnavailable(url, `connection dropped while reading the response (${error.message})`, { cause: error });
    });
    if (response.status >= 500 || response.status === 429) throw new PolicyUnavailable(url, `HTTP ${response.status}: ${body.slice(0, 300)}`);
    if (!response.ok) throw new PolicyRejectedRequest(url, response.status, body);
    return parseGeneration(url, body);
  }
}

function parseGeneration(url: string, body: string): Generation {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new PolicyProtocolError(url, `response is not JSON: ${body.slice(0, 200)}`);
  }
  const parsed = generateResponse.safeParse(json);
  if (!parsed.success) throw new PolicyProtocolError(url, parsed.error.message);
  const { output_ids: outputIds, meta_info: meta } = parsed.data;
  const logprobs = meta.output_token_logprobs.map(([logprob]) => logprob ?? 0);
  if (logprobs.length !== outputIds.length) {
    throw new PolicyProtocolError(url, `${outputIds.length} output ids but ${logprobs.length} logprobs`);
  }
  const type = meta.finish_reason?.type;
  const finishReason: FinishReason = type === 'stop' ? 'stop' : type === 'length' ? 'length' : 'abort';
  return { outputIds, logprobs, finishReason, weightVersion: Number(meta.weight_version ?? 0) || 0 };
}

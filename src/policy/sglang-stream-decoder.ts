import { z } from 'zod';
import type { FinishReason } from '../trajectory/turn.js';
import type { TokenChunk } from './inference-backend.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy-errors.js';

const version = z.union([z.string(), z.number()]);

/** One `data:` chunk of SGLang's streamed `/generate` (tokenizer_manager.py `_handle_batch_output`). */
const generateChunk = z
  .object({
    output_ids: z.array(z.number().int()).default([]),
    meta_info: z
      .object({
        // null while running; FINISH_MATCHED_TOKEN/STR → {type: 'stop'}, FINISH_LENGTH → {type: 'length'},
        // FINISH_ABORT → {type: 'abort', message, status_code, err_type} (schedule_batch.py).
        finish_reason: z.object({ type: z.string(), message: z.string().nullish(), status_code: z.number().int().nullish() }).passthrough().nullish(),
        completion_tokens: z.number().int().nonnegative().optional(),
        // [logprob, token_id, text | null] per output token.
        output_token_logprobs: z.array(z.tuple([z.number().nullable(), z.number().int()]).rest(z.unknown())).optional(),
        // The server's `--weight-version` at the time of the chunk ("default" unless a trainer set one).
        weight_version: version.nullish(),
        // Recent SGLang (utils/weight_versions.py): which version produced output tokens [start, end).
        weight_versions: z.array(z.object({ version, start: z.number().int(), end: z.number().int() })).optional(),
        // Leading prompt tokens found in the radix cache (tokenizer_manager.py, on every chunk).
        cached_tokens: z.number().int().nonnegative().nullish(),
      })
      .passthrough(),
  })
  .passthrough();

/** SGLang's http_server.py streams a ValueError raised while handling the request (e.g. context too long) as this. */
const errorChunk = z.object({ error: z.object({ message: z.string() }).passthrough() }).passthrough();

export interface DecodedChunk {
  chunks: TokenChunk[];
  finishReason?: FinishReason;
}

/**
 * Turns SGLang's streamed chunks into new tokens only. By default SGLang streams *cumulative* `output_ids` and
 * `meta_info.output_token_logprobs` (every chunk repeats all tokens so far); with `--incremental-streaming-output`
 * (formerly `--stream-output`) each chunk carries only the new ones, and some older releases made the ids
 * incremental while the logprobs stayed cumulative. `meta_info.completion_tokens` is always the running total,
 * so each list is classified by its own length against it, and a token is never emitted twice.
 */
export class SglangStreamDecoder {
  private readonly emitted: number[] = [];
  /** Prompt tokens the server served from its prefix cache, as its latest chunk reports them (`meta_info.cached_tokens`). */
  cachedTokens: number | undefined;

  constructor(private readonly url: string) {}

  decode(json: unknown): DecodedChunk {
    const failure = errorChunk.safeParse(json);
    if (failure.success) throw new PolicyRejectedRequest(this.url, 400, failure.data.error.message);
    const parsed = generateChunk.safeParse(json);
    if (!parsed.success) throw new PolicyProtocolError(this.url, `unexpected /generate chunk: ${parsed.error.message}`);
    const { output_ids: ids, meta_info: meta } = parsed.data;
    if (meta.cached_tokens !== null && meta.cached_tokens !== undefined) this.cachedTokens = meta.cached_tokens;
    const fresh = this.newIds(ids, meta.completion_tokens);
    const logprobs = this.newLogprobs(fresh, meta.output_token_logprobs ?? []);
    const chunks = this.split(fresh, logprobs, meta.weight_versions, toVersion(meta.weight_version));
    this.emitted.push(...fresh);
    return { chunks, finishReason: this.finishReason(meta.finish_reason) };
  }

  private newIds(ids: number[], total: number | undefined): number[] {
    const seen = this.emitted.length;
    if (total === undefined) {
      // Without the running total, a chunk that starts with everything already streamed is cumulative.
      const cumulative = ids.length >= seen && this.emitted.every((id, i) => ids[i] === id);
      return cumulative ? ids.slice(seen) : ids;
    }
    if (ids.length === total && total >= seen) return ids.slice(seen);
    if (seen + ids.length === total) return ids;
    throw new PolicyProtocolError(this.url, `chunk has ${ids.length} output ids after ${seen} streamed, but completion_tokens is ${total}`);
  }

  private newLogprobs(fresh: number[], entries: Array<[number | null, number, ...unknown[]]>): number[] {
    if (fresh.length === 0) return [];
    const seen = this.emitted.length;
    const mine = entries.length === seen + fresh.length ? entries.slice(seen) : entries.length === fresh.length ? entries : undefined;
    if (!mine)
      throw new PolicyProtocolError(this.url, `${fresh.length} new output ids but ${entries.length} output_token_logprobs after ${seen} streamed`);
    return mine.map(([logprob, id], i) => {
      if (id !== fresh[i]) throw new PolicyProtocolError(this.url, `output_token_logprobs names token ${id} where output_ids has ${fresh[i]}`);
      if (logprob === null || !Number.isFinite(logprob)) throw new PolicyProtocolError(this.url, `no logprob for output token ${id}`);
      return logprob;
    });
  }

  /** One chunk per run of tokens from the same weight version. */
  private split(
    ids: number[],
    logprobs: number[],
    spans: Array<{ version: string | number; start: number; end: number }> | undefined,
    chunkVersion: number | undefined,
  ): TokenChunk[] {
    const chunks: TokenChunk[] = [];
    ids.forEach((id, i) => {
      const position = this.emitted.length + i;
      const span = spans?.find((s) => s.start <= position && position < s.end);
      const weightVersion = span ? toVersion(span.version) : chunkVersion;
      const last = chunks.at(-1);
      if (last && last.weightVersion === weightVersion) {
        last.ids.push(id);
        last.logprobs.push(logprobs[i]!);
      } else {
        chunks.push({ ids: [id], logprobs: [logprobs[i]!], ...(weightVersion === undefined ? {} : { weightVersion }) });
      }
    });
    return chunks;
  }

  private finishReason(reason: { type: string; message?: string | null; status_code?: number | null } | null | undefined): FinishReason | undefined {
    if (!reason) return undefined;
    if (reason.type === 'stop' || reason.type === 'length') return reason.type;
    if (reason.type !== 'abort') throw new PolicyProtocolError(this.url, `unknown finish_reason type ${reason.type}`);
    // tokenizer_manager.py `_handle_abort_finish_reason`: a streamed abort with status 400 is a rejected request
    // (e.g. input too long), 500/503 a server failure; without a status it is an abort (abort_request, weight update).
    const status = reason.status_code ?? undefined;
    const message = reason.message ?? 'aborted';
    if (status !== undefined && (status === 429 || status >= 500))
      throw new PolicyUnavailable(this.url, `request aborted by the server (HTTP ${status}): ${message}`);
    if (status !== undefined && status >= 400) throw new PolicyRejectedRequest(this.url, status, message);
    return 'abort';
  }
}

/** Our versions are integers; SGLang's are strings ("default" until a trainer names one), which carry none. */
function toVersion(value: string | number | null | undefined): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : undefined;
}

import { z } from 'zod';
import type { FinishReason } from '../trajectory/turn.js';
import type { TokenChunk } from './inference-backend.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy-errors.js';

const version = z.union([z.string(), z.number()]);

/** One `data:` chunk of SGLang's streamed `/generate` (tokenizer_manager.py `_handle_batch_output`). */
export const generateChunk = z
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

/** What the decoder reads of a chunk `generateChunk` accepts. */
export type GenerateChunk = Pick<z.output<typeof generateChunk>, 'output_ids' | 'meta_info'>;

/**
 * `generateChunk` checked by hand, for the stream's hot path (zod was the GPU worker's largest cost per chunk): the
 * chunk as the schema would return it, or undefined where the schema might reject it. Never more lenient than the
 * schema (test/policy/sglang-stream-decoder.test.ts compares the two on valid and malformed chunks): whatever this
 * leaves undefined goes to the schema, which then decides, and words the error as it always did.
 */
export function checkedGenerateChunk(json: unknown): GenerateChunk | undefined {
  if (!isRecord(json)) return undefined;
  const ids = json['output_ids'];
  if (ids !== undefined && !isArrayOf(ids, isInt)) return undefined;
  const meta = json['meta_info'];
  if (!isRecord(meta)) return undefined;
  const finish = meta['finish_reason'];
  if (!isNullish(finish) && !isFinishReason(finish)) return undefined;
  const total = meta['completion_tokens'];
  if (total !== undefined && !isCount(total)) return undefined;
  const logprobs = meta['output_token_logprobs'];
  if (logprobs !== undefined && !isArrayOf(logprobs, isLogprobEntry)) return undefined;
  const weightVersion = meta['weight_version'];
  if (!isNullish(weightVersion) && !isVersion(weightVersion)) return undefined;
  const spans = meta['weight_versions'];
  if (spans !== undefined && !isArrayOf(spans, isVersionSpan)) return undefined;
  const cached = meta['cached_tokens'];
  if (!isNullish(cached) && !isCount(cached)) return undefined;
  return { output_ids: (ids as number[] | undefined) ?? [], meta_info: meta as GenerateChunk['meta_info'] };
}

// zod's own tests, as `generateChunk` applies them: an object is any non-null non-array object; a number is finite;
// `.int()` is a safe integer; `.nonnegative()` is ≥ 0.
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNullish(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isInt(value: unknown): value is number {
  return Number.isSafeInteger(value);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isVersion(value: unknown): value is string | number {
  return typeof value === 'string' || isNumber(value);
}

/** Every element, holes included (zod reads a hole as undefined). */
function isArrayOf(value: unknown, check: (element: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!check(value[i])) return false;
  return true;
}

function isFinishReason(value: unknown): boolean {
  if (!isRecord(value) || typeof value['type'] !== 'string') return false;
  const message = value['message'];
  const status = value['status_code'];
  return (isNullish(message) || typeof message === 'string') && (isNullish(status) || isInt(status));
}

/** `[logprob | null, token_id, ...rest]`. */
function isLogprobEntry(value: unknown): boolean {
  if (!Array.isArray(value) || value.length < 2) return false;
  const logprob: unknown = value[0];
  return (logprob === null || isNumber(logprob)) && isInt(value[1]);
}

function isVersionSpan(value: unknown): boolean {
  return isRecord(value) && isVersion(value['version']) && isInt(value['start']) && isInt(value['end']);
}

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
    // Only a chunk with an `error` can be an error event: the schema is not run (and fails) on every other chunk.
    if (isRecord(json) && json['error'] !== undefined) {
      const failure = errorChunk.safeParse(json);
      if (failure.success) throw new PolicyRejectedRequest(this.url, 400, failure.data.error.message);
    }
    const { output_ids: ids, meta_info: meta } = checkedGenerateChunk(json) ?? this.parsedBySchema(json);
    if (meta.cached_tokens !== null && meta.cached_tokens !== undefined) this.cachedTokens = meta.cached_tokens;
    const fresh = this.newIds(ids, meta.completion_tokens);
    const logprobs = this.newLogprobs(fresh, meta.output_token_logprobs ?? []);
    const chunks = this.split(fresh, logprobs, meta.weight_versions, toVersion(meta.weight_version));
    this.emitted.push(...fresh);
    return { chunks, finishReason: this.finishReason(meta.finish_reason) };
  }

  /** The schema's verdict on a chunk the hand check left undecided: its data, or its error. */
  private parsedBySchema(json: unknown): GenerateChunk {
    const parsed = generateChunk.safeParse(json);
    if (!parsed.success) throw new PolicyProtocolError(this.url, `unexpected /generate chunk: ${parsed.error.message}`);
    return parsed.data;
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

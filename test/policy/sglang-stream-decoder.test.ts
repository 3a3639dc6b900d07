import { describe, expect, it } from 'vitest';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { checkedGenerateChunk, generateChunk, SglangStreamDecoder, type GenerateChunk } from '../../src/policy/sglang-stream-decoder.js';

/** One SGLang chunk: `ids`/`logprobs` as the server puts them on the wire, `total` its completion_tokens. */
function chunk(ids: number[], logprobIds: number[], total: number, meta: Record<string, unknown> = {}): unknown {
  return {
    output_ids: ids,
    meta_info: { finish_reason: null, completion_tokens: total, output_token_logprobs: logprobIds.map((id) => [-0.5, id, null]), ...meta },
  };
}

function idsOf(decoder: SglangStreamDecoder, json: unknown): number[] {
  return decoder.decode(json).chunks.flatMap((c) => c.ids);
}

describe('SGLang stream decoding', () => {
  it('emits only the new tokens of cumulative chunks', () => {
    const decoder = new SglangStreamDecoder('http://sglang');
    expect(idsOf(decoder, chunk([1, 2], [1, 2], 2))).toEqual([1, 2]);
    expect(idsOf(decoder, chunk([1, 2, 3, 4], [1, 2, 3, 4], 4))).toEqual([3, 4]);
    expect(idsOf(decoder, chunk([1, 2, 3, 4], [1, 2, 3, 4], 4, { finish_reason: { type: 'abort', message: 'Abort', status_code: null } }))).toEqual(
      [],
    );
  });

  it('takes incremental chunks as they come', () => {
    const decoder = new SglangStreamDecoder('http://sglang');
    expect(idsOf(decoder, chunk([1, 2], [1, 2], 2))).toEqual([1, 2]);
    expect(idsOf(decoder, chunk([3], [3], 3))).toEqual([3]);
  });

  it('handles incremental ids with cumulative logprobs, as older --stream-output releases sent', () => {
    const decoder = new SglangStreamDecoder('http://sglang');
    decoder.decode(chunk([1, 2], [1, 2], 2));
    const { chunks } = decoder.decode(chunk([3, 4], [1, 2, 3, 4], 4));
    expect(chunks).toEqual([{ ids: [3, 4], logprobs: [-0.5, -0.5] }]);
  });

  it('splits a chunk by the weight_versions spans of recent SGLang', () => {
    const decoder = new SglangStreamDecoder('http://sglang');
    const { chunks } = decoder.decode(
      chunk([1, 2, 3], [1, 2, 3], 3, {
        weight_version: '8',
        weight_versions: [
          { version: '7', start: 0, end: 2 },
          { version: '8', start: 2, end: 3 },
        ],
      }),
    );
    expect(chunks.map((c) => [c.ids, c.weightVersion])).toEqual([
      [[1, 2], 7],
      [[3], 8],
    ]);
  });

  it('maps finish reasons, and aborts with an HTTP status to typed errors', () => {
    const finish = (reason: unknown) => new SglangStreamDecoder('http://sglang').decode(chunk([], [], 0, { finish_reason: reason })).finishReason;
    expect(finish({ type: 'stop', matched: 151645 })).toBe('stop');
    expect(finish({ type: 'length', length: 8 })).toBe('length');
    expect(finish({ type: 'abort', message: 'Abort request', status_code: null, err_type: null })).toBe('abort');
    expect(() => finish({ type: 'abort', message: 'input too long', status_code: 400 })).toThrow(PolicyRejectedRequest);
    expect(() => finish({ type: 'abort', message: 'engine died', status_code: 503 })).toThrow(PolicyUnavailable);
  });

  it('turns an error event into PolicyRejectedRequest with its message', () => {
    const decoder = new SglangStreamDecoder('http://sglang');
    expect(() => decoder.decode({ error: { message: "The input (9000 tokens) is longer than the model's context length" } })).toThrow(
      /context length/,
    );
  });

  it('refuses chunks whose counts or logprob ids disagree', () => {
    expect(() => new SglangStreamDecoder('u').decode(chunk([1, 2], [1, 2], 5))).toThrow(PolicyProtocolError);
    expect(() => new SglangStreamDecoder('u').decode(chunk([1, 2], [1, 9], 2))).toThrow(PolicyProtocolError);
    expect(() => new SglangStreamDecoder('u').decode({ meta_info: 'nope' })).toThrow(PolicyProtocolError);
  });

  it('keeps the prompt tokens the server reports served from its prefix cache (meta_info.cached_tokens), absent where it reports none', () => {
    const decoder = new SglangStreamDecoder('http://sglang');
    expect(decoder.cachedTokens).toBeUndefined();
    decoder.decode(chunk([1, 2], [1, 2], 2, { prompt_tokens: 40, cached_tokens: 32 }));
    expect(decoder.cachedTokens).toBe(32);
    decoder.decode(chunk([1, 2, 3], [1, 2, 3], 3, { prompt_tokens: 40, cached_tokens: 32, finish_reason: { type: 'stop' } }));
    expect(decoder.cachedTokens).toBe(32);
    const silent = new SglangStreamDecoder('http://sglang');
    silent.decode(chunk([1], [1], 1, { finish_reason: { type: 'stop' } }));
    expect(silent.cachedTokens).toBeUndefined();
  });
});

/** A small seeded generator (mulberry32), so the comparison below checks the same chunks on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values a malformed chunk may carry where the schema expects something else. */
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  -1,
  1.5,
  -2.25,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  '',
  '7',
  'default',
  [],
  [1],
  [null, 1],
  [-0.5, 1, null],
  [-0.5, '1'],
  [Number.NaN, 1],
  [1, , 2], // eslint-disable-line no-sparse-arrays
  {},
  { type: 'stop' },
  { type: 5 },
  { version: '7', start: 0, end: 1 },
  { version: 7.5, start: 0, end: 1.5 },
  { version: null, start: 0, end: 1 },
];

/** A chunk SGLang could send: cumulative or incremental, with or without each optional field. */
function validChunk(next: () => number): Record<string, unknown> {
  const pick = <T>(values: T[]): T => values[Math.floor(next() * values.length)]!;
  const ids = Array.from({ length: Math.floor(next() * 5) }, () => Math.floor(next() * 150_000));
  const meta: Record<string, unknown> = {};
  if (next() < 0.8)
    meta['finish_reason'] = pick([
      null,
      undefined,
      { type: 'stop', matched: 151645 },
      { type: 'length', length: 8 },
      { type: 'abort', message: 'Abort', status_code: null, err_type: null },
      { type: 'abort', message: null, status_code: 503 },
    ]);
  if (next() < 0.8) meta['completion_tokens'] = ids.length + pick([0, 3]);
  if (next() < 0.8)
    meta['output_token_logprobs'] = ids.map((id) =>
      pick([
        [-0.5, id, null],
        [null, id],
        [-1e-9, id, 'text', 'more'],
        [0, id],
      ]),
    );
  if (next() < 0.5) meta['weight_version'] = pick(['default', '7', 7, 7.5, null, undefined]);
  if (next() < 0.3) meta['weight_versions'] = [{ version: pick(['7', 7, 'default']), start: 0, end: ids.length, extra: 1 }];
  if (next() < 0.5) meta['cached_tokens'] = pick([0, 32, null, undefined]);
  if (next() < 0.3) meta['prompt_tokens'] = 40;
  const chunk: Record<string, unknown> = { meta_info: meta };
  if (next() < 0.9) chunk['output_ids'] = ids;
  if (next() < 0.1) chunk['index'] = 0;
  return chunk;
}

/** The chunk with one value somewhere in it (the chunk itself, a field, an element) replaced by an odd one. */
function malformed(chunk: Record<string, unknown>, next: () => number): unknown {
  const odd = ODD_VALUES[Math.floor(next() * ODD_VALUES.length)];
  const copy = structuredClone(chunk) as Record<string, unknown>;
  const meta = copy['meta_info'] as Record<string, unknown>;
  const containers: Array<Record<string, unknown> | unknown[]> = [copy, meta];
  for (const value of [...Object.values(meta), copy['output_ids']]) {
    if (value && typeof value === 'object') containers.push(value as Record<string, unknown>);
    if (Array.isArray(value)) for (const element of value) if (element && typeof element === 'object') containers.push(element as unknown[]);
  }
  if (next() < 0.05) return odd;
  const target = containers[Math.floor(next() * containers.length)]!;
  const keys = Array.isArray(target)
    ? [...target.keys(), target.length]
    : [...Object.keys(target), 'output_ids', 'meta_info', 'finish_reason', 'completion_tokens', 'message', 'status_code', 'type'];
  const key = keys[Math.floor(next() * keys.length)]!;
  (target as Record<string | number, unknown>)[key] = odd;
  return copy;
}

/** What the decoder reads of a chunk the schema returns (a span's other fields are stripped by the schema, unread). */
function asRead(chunk: GenerateChunk) {
  const meta = chunk.meta_info;
  return {
    ids: chunk.output_ids,
    finish: meta.finish_reason,
    total: meta.completion_tokens,
    logprobs: meta.output_token_logprobs,
    version: meta.weight_version,
    spans: meta.weight_versions?.map(({ version, start, end }) => ({ version, start, end })),
    cached: meta.cached_tokens,
  };
}

describe("the hand check of SGLang's chunks", () => {
  it('accepts exactly the chunks the schema accepts, as the schema returns them, over 5,000 valid and malformed chunks', () => {
    const next = random(38);
    let accepted = 0;
    let rejected = 0;
    for (let i = 0; i < 5_000; i++) {
      const valid = validChunk(next);
      const json = i % 4 === 0 ? valid : malformed(valid, next);
      const byHand = checkedGenerateChunk(json);
      const bySchema = generateChunk.safeParse(json);
      expect(byHand !== undefined, JSON.stringify(json)).toBe(bySchema.success);
      if (byHand && bySchema.success) {
        expect(asRead(byHand)).toEqual(asRead(bySchema.data));
        accepted++;
      } else {
        rejected++;
      }
    }
    // Both sides well exercised.
    expect(accepted).toBeGreaterThan(1_000);
    expect(rejected).toBeGreaterThan(1_000);
  });

  it('leaves the decoder rejecting a malformed chunk with the PolicyProtocolError and the message the schema gave', () => {
    const next = random(7);
    let checked = 0;
    for (let i = 0; i < 2_000; i++) {
      const json = malformed(validChunk(next), next);
      const bySchema = generateChunk.safeParse(json);
      if (bySchema.success) continue;
      const decode = () => new SglangStreamDecoder('http://sglang').decode(json);
      expect(decode).toThrow(PolicyProtocolError);
      expect(decode).toThrow(`unexpected /generate chunk: ${bySchema.error.message}`);
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('still reads an error event whatever else the chunk holds, and a chunk whose `error` is no error event as a chunk', () => {
    const decode = (json: unknown) => () => new SglangStreamDecoder('http://sglang').decode(json);
    expect(decode({ error: { message: 'too long', code: 400 }, ...(chunk([1], [1], 1) as object) })).toThrow(PolicyRejectedRequest);
    expect(decode({ error: { message: 'too long' }, meta_info: 'nope' })).toThrow(PolicyRejectedRequest);
    expect(new SglangStreamDecoder('u').decode({ error: null, ...(chunk([1], [1], 1) as object) }).chunks).toEqual([{ ids: [1], logprobs: [-0.5] }]);
    expect(decode({ error: { message: 5 } })).toThrow(PolicyProtocolError);
    expect(decode({ error: 'too long' })).toThrow(PolicyProtocolError);
  });
});

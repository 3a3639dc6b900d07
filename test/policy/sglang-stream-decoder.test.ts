import { describe, expect, it } from 'vitest';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { SglangStreamDecoder } from '../../src/policy/sglang-stream-decoder.js';

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

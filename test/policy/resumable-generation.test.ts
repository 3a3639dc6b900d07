import { describe, expect, it } from 'vitest';
import type { InferenceBackend, StreamRequest, TokenChunk } from '../../src/policy/inference-backend.js';
import { PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { generateResumable } from '../../src/policy/resumable-generation.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

/** A scripted backend: each call plays the next script entry (chunks, then how the stream ends). */
function scriptedBackend(script: { chunks: TokenChunk[]; end: 'stop' | 'length' | 'abort'; cachedTokens?: number }[]) {
  const requests: StreamRequest[] = [];
  const backend: InferenceBackend = {
    kind: 'sglang',
    url: 'http://scripted',
    async generate(request, onChunk) {
      requests.push({ ...request, inputIds: [...request.inputIds] });
      const step = script.shift() ?? { chunks: [], end: 'abort' as const };
      for (const chunk of step.chunks) onChunk(chunk);
      return { finishReason: step.end, ...(step.cachedTokens === undefined ? {} : { cachedTokens: step.cachedTokens }) };
    },
    topLogprobs: async () => [],
    abort: async () => undefined,
    health: async () => true,
    updateWeights: async () => undefined,
    servedWeightVersion: async () => undefined,
    scorePrompt: async () => [],
    servesWeights: async () => false,
    contextWindow: async () => 1_000,
  };
  return { backend, requests };
}

describe('resumable generation', () => {
  it('continues an aborted request from context plus the tokens so far, stamping each token with its version', async () => {
    const { backend, requests } = scriptedBackend([
      { chunks: [{ ids: [10, 11], logprobs: [-0.1, -0.2], weightVersion: 3 }], end: 'abort' },
      {
        chunks: [
          { ids: [12], logprobs: [-0.3], weightVersion: 4 },
          { ids: [13], logprobs: [-0.4] },
        ],
        end: 'stop',
      },
    ]);
    const { output, finishReason } = await generateResumable(
      backend,
      { context: [1, 2], maxNewTokens: 10, sampling: DEFAULT_SAMPLING, requestId: 'r' },
      { ids: [], logprobs: [], versions: [] },
      () => 7,
      () => undefined,
    );
    expect(finishReason).toBe('stop');
    expect(output).toEqual({ ids: [10, 11, 12, 13], logprobs: [-0.1, -0.2, -0.3, -0.4], versions: [3, 3, 4, 7] });
    expect(requests.map((r) => r.inputIds)).toEqual([
      [1, 2],
      [1, 2, 10, 11],
    ]);
    expect(requests.map((r) => r.maxNewTokens)).toEqual([10, 8]);
    expect(new Set(requests.map((r) => r.requestId)).size).toBe(2);
  });

  it('resumes from tokens recovered from an earlier attempt and spends only the remaining budget', async () => {
    const { backend, requests } = scriptedBackend([{ chunks: [{ ids: [30, 31], logprobs: [-1, -1] }], end: 'length' }]);
    const start = { ids: [20, 21, 22], logprobs: [-0.5, -0.5, -0.5], versions: [0, 0, 0] };
    const { output, finishReason } = await generateResumable(
      backend,
      { context: [1], maxNewTokens: 5, sampling: DEFAULT_SAMPLING, requestId: 'r' },
      start,
      () => 0,
      () => undefined,
    );
    expect(requests[0]!.inputIds).toEqual([1, 20, 21, 22]);
    expect(requests[0]!.maxNewTokens).toBe(2);
    expect(output.ids).toEqual([20, 21, 22, 30, 31]);
    expect(finishReason).toBe('length');
    expect(start.ids).toHaveLength(3);
  });

  it('ends with length without calling the server when the recovered tokens already fill the budget', async () => {
    const { backend, requests } = scriptedBackend([]);
    const { finishReason } = await generateResumable(
      backend,
      { context: [1], maxNewTokens: 2, sampling: DEFAULT_SAMPLING, requestId: 'r' },
      { ids: [5, 6], logprobs: [0, 0], versions: [0, 0] },
      () => 0,
      () => undefined,
    );
    expect(finishReason).toBe('length');
    expect(requests).toHaveLength(0);
  });

  it('gives up as unavailable when a server keeps aborting without producing tokens', async () => {
    const { backend } = scriptedBackend([]);
    await expect(
      generateResumable(
        backend,
        { context: [1], maxNewTokens: 5, sampling: DEFAULT_SAMPLING, requestId: 'r' },
        { ids: [], logprobs: [], versions: [] },
        () => 0,
        () => undefined,
      ),
    ).rejects.toBeInstanceOf(PolicyUnavailable);
  });

  it('reports progress after every chunk', async () => {
    const { backend } = scriptedBackend([
      {
        chunks: [
          { ids: [1], logprobs: [0] },
          { ids: [2], logprobs: [0] },
        ],
        end: 'stop',
      },
    ]);
    const seen: number[] = [];
    await generateResumable(
      backend,
      { context: [9], maxNewTokens: 5, sampling: DEFAULT_SAMPLING, requestId: 'r' },
      { ids: [], logprobs: [], versions: [] },
      () => 0,
      (o) => seen.push(o.ids.length),
    );
    expect(seen).toEqual([1, 2]);
  });

  it('reports the cached prompt tokens of the request that finished the turn, none where the server reports none', async () => {
    const { backend } = scriptedBackend([
      { chunks: [{ ids: [1], logprobs: [-1] }], end: 'abort', cachedTokens: 16 },
      { chunks: [{ ids: [2], logprobs: [-1] }], end: 'stop', cachedTokens: 48 },
    ]);
    const request = { context: [9, 9], maxNewTokens: 8, sampling: DEFAULT_SAMPLING, requestId: 'r' };
    const resumed = await generateResumable(
      backend,
      request,
      { ids: [], logprobs: [], versions: [] },
      () => 0,
      () => undefined,
    );
    expect(resumed.cachedTokens).toBe(48);
    const silent = await generateResumable(
      scriptedBackend([{ chunks: [{ ids: [1], logprobs: [-1] }], end: 'stop' }]).backend,
      request,
      { ids: [], logprobs: [], versions: [] },
      () => 0,
      () => undefined,
    );
    expect(silent).not.toHaveProperty('cachedTokens');
  });
});

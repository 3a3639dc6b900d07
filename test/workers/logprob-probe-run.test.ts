import { describe, expect, it } from 'vitest';
import type { InferenceBackend, TopLogprobsRequest } from '../../src/policy/inference-backend.js';
import type { TopLogprob } from '../../src/policy/logprob-verdict.js';
import { PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { probeInBackground } from '../../src/workers/logprob-probe-run.js';

/** A server whose logprobs are processed (gaps ×1/T, top-k renormalised), unreachable for its first `down` requests. */
function server(down: number): InferenceBackend & { asked: number } {
  const logits = [0, -0.2, -0.5, -0.9, -1.4];
  const backend = {
    kind: 'vllm' as const,
    url: 'http://probe.invalid',
    asked: 0,
    async topLogprobs(request: TopLogprobsRequest): Promise<TopLogprob[]> {
      backend.asked += 1;
      if (backend.asked <= down) throw new PolicyUnavailable(backend.url, 'connection refused');
      const kept = request.sampling.topK === -1 ? logits : logits.slice(0, request.sampling.topK);
      const scaled = kept.map((z) => z / request.sampling.temperature);
      const total = Math.log(scaled.reduce((sum, z) => sum + Math.exp(z), 0) + (request.sampling.topK === -1 ? 1e4 * Math.exp(-3) : 0));
      return scaled.map((z, id) => ({ id, logprob: z - total }));
    },
    generate: async () => ({ finishReason: 'stop' as const }),
    abort: async () => undefined,
    health: async () => true,
    updateWeights: async () => undefined,
    servedWeightVersion: async () => undefined,
    contextWindow: async () => 4096,
    scorePrompt: async () => [],
    servesWeights: async () => true,
  };
  return backend;
}

describe('probeInBackground', () => {
  it('asks again while the server cannot be reached, then hands every caller the same verdict', async () => {
    const backend = server(2);
    const verdict = probeInBackground(backend, 10, new AbortController().signal);
    expect(await verdict()).toMatchObject({ temperature: 'applied', truncation: 'applied' });
    expect(await verdict()).toBe(await verdict());
    expect(backend.asked).toBe(2 + 6);
  });

  it('leaves waiting requests PolicyUnavailable (retryable) when the worker stops before a verdict', async () => {
    const stop = new AbortController();
    const verdict = probeInBackground(server(Number.POSITIVE_INFINITY), 10_000, stop.signal);
    stop.abort();
    await expect(verdict()).rejects.toBeInstanceOf(PolicyUnavailable);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyRejectedRequest } from '../../src/policy/policy-errors.js';
import { SglangBackend } from '../../src/policy/sglang-backend.js';
import { runBackendContract, type ContractServer } from './backend-contract.case.js';
import { startFakeSglang, type FakeSglangOptions } from './fakes/fake-sglang.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

async function fakeSglangServer(options: FakeSglangOptions): Promise<ContractServer> {
  const fake = await startFakeSglang(options);
  return {
    backend: new SglangBackend(fake.url),
    backendAt: (url) => new SglangBackend(url),
    prompt: [151644, 872, 198, 3838, 374, 220, 21, 24768, 220, 22, 30, 151645],
    contextWindow: fake.contextLength,
    reportsWeightVersion: true,
    checkpoint: (version) => `/checkpoints/step-${version}`,
    served: (rid) => {
      const record = fake.served(rid);
      return (
        record && {
          prompt: record.body['input_ids'] ?? record.body['text'],
          sentIds: record.sentIds,
          sentLogprobs: record.sentLogprobs,
          end: record.end,
        }
      );
    },
    setFault: fake.setFault,
    close: fake.close,
  };
}

runBackendContract('SglangBackend, cumulative stream (SGLang default)', () => fakeSglangServer({}));
runBackendContract('SglangBackend, --incremental-streaming-output', () => fakeSglangServer({ incremental: true }));

describe('SglangBackend against fake SGLang', () => {
  let fake: Awaited<ReturnType<typeof startFakeSglang>>;
  let backend: SglangBackend;
  beforeAll(async () => {
    fake = await startFakeSglang({ contextLength: 2048 });
    backend = new SglangBackend(`${fake.url}/`);
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('sends rid, stream, return_logprob and every sampling parameter as SGLang names them', async () => {
    const sampling = { temperature: 0.7, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1 };
    await backend.generate({ inputIds: [1, 2, 3], maxNewTokens: 4, sampling, requestId: 'turn-1/0' }, () => undefined);
    expect(fake.served('turn-1/0')!.body).toEqual({
      input_ids: [1, 2, 3],
      sampling_params: {
        max_new_tokens: 4,
        temperature: 0.7,
        top_p: 0.95,
        top_k: 20,
        min_p: 0.05,
        repetition_penalty: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
      },
      return_logprob: true,
      stream: true,
      rid: 'turn-1/0',
    });
  });

  it('reports the prompt tokens the server served from its prefix cache (meta_info.cached_tokens)', async () => {
    expect(
      await backend.generate({ inputIds: [1, 2, 3], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'cached' }, () => undefined),
    ).toEqual({ finishReason: expect.any(String), cachedTokens: 0 });
  });

  it('reports no weight version while the server reports "default"', async () => {
    const versions: Array<number | undefined> = [];
    await backend.generate({ inputIds: [5, 6], maxNewTokens: 8, sampling: DEFAULT_SAMPLING, requestId: 'unversioned' }, (chunk) =>
      versions.push(chunk.weightVersion),
    );
    expect(versions.length).toBeGreaterThan(0);
    expect(versions.every((version) => version === undefined)).toBe(true);
  });

  it('asks /abort_request for the request when the caller cancels', async () => {
    const controller = new AbortController();
    const failure = backend.generate(
      { inputIds: [7, 8], maxNewTokens: 64, sampling: DEFAULT_SAMPLING, requestId: 'cancelled-turn', signal: controller.signal },
      () => controller.abort(),
    );
    await expect(failure).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => fake.abortCalls()).toContain('cancelled-turn');
  });

  it("rejects a failed weight update with the server's message", async () => {
    const failure = backend.updateWeights(3, '/checkpoints/missing');
    await expect(failure).rejects.toBeInstanceOf(PolicyRejectedRequest);
    await expect(failure).rejects.toThrow(/not found/);
  });

  it('reloads from the served model path when no weights path is given', async () => {
    await backend.updateWeights(4);
    const versions: Array<number | undefined> = [];
    await backend.generate({ inputIds: [9], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'after-reload' }, (chunk) =>
      versions.push(chunk.weightVersion),
    );
    expect(versions).toEqual([4]);
  });

  it('falls back to /v1/models max_model_len for the context window, as real SGLang reports it', async () => {
    expect(await backend.contextWindow()).toBe(2048);
  });

  it('reports a 400 ErrorResponse as PolicyRejectedRequest carrying its message', async () => {
    const failure = new SglangBackend(fake.url).generate(
      { inputIds: [], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'empty' },
      () => undefined,
    );
    await expect(failure).rejects.toBeInstanceOf(PolicyRejectedRequest);
    await expect(failure).rejects.toThrow(/HTTP 400.*input_ids/s);
  });

  it('reports an unhealthy server (503) as not healthy', async () => {
    fake.setHealthy(false);
    try {
      expect(await backend.health()).toBe(false);
    } finally {
      fake.setHealthy(true);
    }
  });
});

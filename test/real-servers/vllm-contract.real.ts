import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { runBackendContract } from '../policy/backend-contract.case.js';
import { startRecordingProxy } from './recording-proxy.js';
import { MAX_MODEL_LEN, POLICY_MODELS, startVllm, stopStartedServers, type RunningVllm } from '../../src/stack/vllm-server.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';
import { pollUntil } from '../../src/timing/poll-until.js';

// One server for the file: the contract below, then what only a real server shows.
let vllm: RunningVllm | undefined;
const server = (): RunningVllm => vllm!;

runBackendContract('VllmBackend against a real vLLM (CPU, tiny Qwen3)', async () => {
  vllm ??= await startVllm();
  const proxy = await startRecordingProxy(vllm.url);
  const tokenizer = await loadModelTokenizer();
  return {
    backend: new VllmBackend(proxy.url),
    backendAt: (url) => new VllmBackend(url),
    prompt: promptIds(tokenizer, 'What is $6 \\times 7$?'),
    contextWindow: MAX_MODEL_LEN,
    reportsWeightVersion: false,
    // Two real checkpoints: any version loads one of the two seeds' weights.
    checkpoint: (version) => POLICY_MODELS[version % 2]!,
    longRequestTokens: 48,
    served: (requestId) => {
      const record = proxy.served(requestId);
      return record && { prompt: record.body['prompt'], sentIds: record.sentIds, sentLogprobs: record.sentLogprobs, end: record.end };
    },
    setFault: proxy.setFault,
    close: proxy.close,
  };
});

describe('VllmBackend against a real vLLM, beyond the contract', () => {
  beforeAll(async () => {
    vllm ??= await startVllm();
  });
  afterAll(async () => {
    await stopStartedServers();
  });

  it('answers real logprobs of a random-weight model over the real Qwen3 vocabulary (about ln(1/151936))', async () => {
    const backend = new VllmBackend(server().url);
    const logprobs: number[] = [];
    const end = await backend.generate(
      { inputIds: [151644, 872, 198, 151645], maxNewTokens: 16, sampling: DEFAULT_SAMPLING, requestId: `lp-${randomUUID()}` },
      (chunk) => logprobs.push(...chunk.logprobs),
    );
    expect(end.finishReason).toBe('length');
    expect(logprobs).toHaveLength(16);
    const mean = logprobs.reduce((a, b) => a + b, 0) / logprobs.length;
    expect(mean).toBeGreaterThan(-13);
    expect(mean).toBeLessThan(-10.5);
  });

  it('caps max_tokens to the room the window leaves instead of refusing the request', async () => {
    const backend = new VllmBackend(server().url);
    const ids: number[] = [];
    const end = await backend.generate(
      { inputIds: Array(MAX_MODEL_LEN - 3).fill(220), maxNewTokens: 50, sampling: DEFAULT_SAMPLING, requestId: `cap-${randomUUID()}` },
      (chunk) => ids.push(...chunk.ids),
    );
    expect(end.finishReason).toBe('length');
    expect(ids).toHaveLength(3);
  });

  it('takes a request closed by the client out of the running batch (the running-requests gauge drops)', async () => {
    const backend = new VllmBackend(server().url);
    const requestId = `gauge-${randomUUID()}`;
    let seen = 0;
    const generation = backend.generate({ inputIds: [151644, 872, 198], maxNewTokens: 1500, sampling: DEFAULT_SAMPLING, requestId }, (chunk) => {
      seen += chunk.ids.length;
    });
    await until(async () => seen > 5 && (await server().metrics()).running === 1, 20_000);
    await backend.abort(requestId);
    expect((await generation).finishReason).toBe('abort');
    await until(async () => (await server().metrics()).running === 0, 10_000);
  });

  it("reloads a version published without a weights path from the served model's own directory", async () => {
    await expect(new VllmBackend(server().url).updateWeights(99)).resolves.toBeUndefined();
  });
});

function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return pollUntil(condition, { what: String(condition), timeoutMs, fatal: () => true });
}

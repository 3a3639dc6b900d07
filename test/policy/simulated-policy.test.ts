import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/datasets/index.js';
import { PolicyRejectedRequest, PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { SglangClient } from './non-streaming-client.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { feedbackTokens, promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';

const problems: Problem[] = [
  { qid: 'p-1', problem: 'What is $6 \\times 7$?', gold: ['42'], source: 'math' },
  { qid: 'p-2', problem: 'What is $84 / 2$?', gold: ['42'], source: 'math' },
];

const baseConfig: SimulatedPolicyConfig = { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS, tokensPerSecond: 1e6, seed: 7 };

let tok: ModelTokenizer;
let policy: RunningSimulatedPolicy;
let client: SglangClient;
let prompt: number[];
/** Extra servers a test starts for a config of its own; closed after each test. */
const extraPolicies: RunningSimulatedPolicy[] = [];

beforeAll(async () => {
  tok = await loadModelTokenizer();
  policy = await startSimulatedPolicy(tok, new AnswerBook(problems), baseConfig);
  client = new SglangClient(policy.url);
  prompt = promptIds(tok, problems[0]!.problem);
});

afterEach(async () => {
  policy?.setFaults(NO_FAULTS);
  await Promise.all(extraPolicies.splice(0).map((extra) => extra.close()));
});

afterAll(async () => {
  await policy?.close();
});

async function startPolicy(overrides: Partial<SimulatedPolicyConfig>): Promise<{ policy: RunningSimulatedPolicy; client: SglangClient }> {
  const started = await startSimulatedPolicy(tok, new AnswerBook(problems), { ...baseConfig, ...overrides });
  extraPolicies.push(started);
  return { policy: started, client: new SglangClient(started.url) };
}

function boxed(text: string): string | undefined {
  return /\\boxed\{([^}]*)\}/.exec(text)?.[1];
}

async function postJson(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

describe('simulated policy generation', () => {
  it('answers with real tokens that decode to a boxed answer, ending in EOS', async () => {
    const generation = await client.generate({ inputIds: prompt, maxNewTokens: 1024, temperature: 1 });
    expect(generation.outputIds.length).toBeGreaterThan(10);
    expect(tok.decodeText(generation.outputIds)).toContain('\\boxed{');
    expect(generation.finishReason).toBe('stop');
    expect(generation.outputIds.at(-1)).toBe(tok.eosTokenId);
    expect(generation.outputIds.slice(0, -1)).not.toContain(tok.eosTokenId);
  });

  it('returns one non-positive logprob per output token', async () => {
    const generation = await client.generate({ inputIds: prompt, maxNewTokens: 1024, temperature: 1 });
    expect(generation.logprobs).toHaveLength(generation.outputIds.length);
    for (const logprob of generation.logprobs) {
      expect(Number.isFinite(logprob)).toBe(true);
      expect(logprob).toBeLessThanOrEqual(0);
    }
  });

  it('boxes the gold answer when it is always right', async () => {
    const right = await startPolicy({ correctProbability: 1 });
    for (const problem of problems) {
      const generation = await right.client.generate({ inputIds: promptIds(tok, problem.problem), maxNewTokens: 1024, temperature: 1 });
      expect(boxed(tok.decodeText(generation.outputIds))).toBe('42');
    }
  });

  it('boxes a wrong answer when it is never right', async () => {
    const wrong = await startPolicy({ correctProbability: 0 });
    for (const problem of problems) {
      const generation = await wrong.client.generate({ inputIds: promptIds(tok, problem.problem), maxNewTokens: 1024, temperature: 1 });
      const answer = boxed(tok.decodeText(generation.outputIds));
      expect(answer).toBeDefined();
      expect(answer).not.toBe('42');
    }
  });

  it('uses the correct probability of the turn the context has reached', async () => {
    const { client: perTurn } = await startPolicy({ correctProbability: [1, 0] });
    const first = await perTurn.generate({ inputIds: prompt, maxNewTokens: 1024, temperature: 1 });
    expect(boxed(tok.decodeText(first.outputIds))).toBe('42');
    const secondContext = [...prompt, ...first.outputIds, ...feedbackTokens(tok, true, true).ids];
    const second = await perTurn.generate({ inputIds: secondContext, maxNewTokens: 1024, temperature: 1 });
    expect(boxed(tok.decodeText(second.outputIds))).not.toBe('42');
  });

  it('stops at max_new_tokens with finish reason length and no EOS', async () => {
    const generation = await client.generate({ inputIds: prompt, maxNewTokens: 5, temperature: 1 });
    expect(generation.finishReason).toBe('length');
    expect(generation.outputIds).toHaveLength(5);
    expect(generation.logprobs).toHaveLength(5);
    expect(generation.outputIds).not.toContain(tok.eosTokenId);
  });

  it('replays the same answers for the same seed', async () => {
    const a = await startPolicy({});
    const b = await startPolicy({});
    const fromA = await a.client.generate({ inputIds: prompt, maxNewTokens: 1024, temperature: 1 });
    const fromB = await b.client.generate({ inputIds: prompt, maxNewTokens: 1024, temperature: 1 });
    expect(fromB.outputIds).toEqual(fromA.outputIds);
    expect(fromB.logprobs).toEqual(fromA.logprobs);
  });
});

describe('simulated policy wire protocol', () => {
  it("answers /generate in SGLang's native shape", async () => {
    const { status, json } = await postJson(`${policy.url}/generate`, {
      input_ids: prompt,
      sampling_params: { max_new_tokens: 1024, temperature: 1 },
      return_logprob: true,
    });
    expect(status).toBe(200);
    expect(Array.isArray(json.output_ids)).toBe(true);
    expect(typeof json.text).toBe('string');
    expect(json.text).toBe(tok.decodeText(json.output_ids));
    const entries = json.meta_info.output_token_logprobs as unknown[][];
    expect(entries).toHaveLength(json.output_ids.length);
    entries.forEach((entry, i) => {
      expect(entry).toHaveLength(3);
      expect(typeof entry[0]).toBe('number');
      expect(entry[1]).toBe(json.output_ids[i]);
      expect(entry[2]).toBeNull();
    });
    expect(json.meta_info.finish_reason).toEqual({ type: 'stop', matched: tok.eosTokenId });
    expect(json.meta_info.prompt_tokens).toBe(prompt.length);
    expect(json.meta_info.completion_tokens).toBe(json.output_ids.length);
  });

  it('reports finish_reason type length with the length when cut off', async () => {
    const { json } = await postJson(`${policy.url}/generate`, { input_ids: prompt, sampling_params: { max_new_tokens: 3 }, return_logprob: true });
    expect(json.meta_info.finish_reason).toEqual({ type: 'length', length: 3 });
  });

  it('rejects a body without input_ids with 400', async () => {
    const { status, json } = await postJson(`${policy.url}/generate`, { sampling_params: { max_new_tokens: 8 } });
    expect(status).toBe(400);
    expect(json.error.message).toMatch(/invalid \/generate request/);
  });

  it('rejects a request exceeding the context window as PolicyRejectedRequest with status 400', async () => {
    const failure = client.generate({ inputIds: prompt, maxNewTokens: baseConfig.contextWindow, temperature: 1 });
    await expect(failure).rejects.toBeInstanceOf(PolicyRejectedRequest);
    await expect(failure).rejects.toMatchObject({ status: 400 });
    await expect(failure).rejects.toThrow(/maximum context length of 131072/);
  });

  it('bumps the weight version reported by later generations on /update_weights_from_disk', async () => {
    const { policy: fresh, client: freshClient } = await startPolicy({});
    const before = await freshClient.generate({ inputIds: prompt, maxNewTokens: 4, temperature: 1 });
    expect(before.weightVersion).toBe(0);
    const { status, json } = await postJson(`${fresh.url}/update_weights_from_disk`, { model_path: '/checkpoints/step-1' });
    expect(status).toBe(200);
    expect(json.success).toBe(true);
    const after = await freshClient.generate({ inputIds: prompt, maxNewTokens: 4, temperature: 1 });
    expect(after.weightVersion).toBe(1);
    expect(fresh.stats().weightVersion).toBe(1);
  });

  it('counts requests and generated tokens', async () => {
    const { policy: fresh, client: freshClient } = await startPolicy({});
    const first = await freshClient.generate({ inputIds: prompt, maxNewTokens: 1024, temperature: 1 });
    const second = await freshClient.generate({ inputIds: prompt, maxNewTokens: 7, temperature: 1 });
    await postJson(`${fresh.url}/generate`, {}); // invalid: counted as a request, generates nothing
    const stats = fresh.stats();
    expect(stats.requests).toBe(3);
    expect(stats.completed).toBe(2);
    expect(stats.generatedTokens).toBe(first.outputIds.length + second.outputIds.length);
    expect(stats.inFlight).toBe(0);
  });
});

describe('simulated policy faults', () => {
  it('answers 503 at errorRate 1, which the client reports as PolicyUnavailable', async () => {
    policy.setFaults({ errorRate: 1 });
    const failure = client.generate({ inputIds: prompt, maxNewTokens: 16, temperature: 1 });
    await expect(failure).rejects.toBeInstanceOf(PolicyUnavailable);
    await expect(failure).rejects.toThrow(/HTTP 503/);
  });

  it('drops the connection mid-response at dropRate 1, which the client reports as PolicyUnavailable', async () => {
    policy.setFaults({ dropRate: 1 });
    const before = policy.stats().faults['drop'] ?? 0;
    await expect(client.generate({ inputIds: prompt, maxNewTokens: 16, temperature: 1 })).rejects.toBeInstanceOf(PolicyUnavailable);
    expect(policy.stats().faults['drop']).toBe(before + 1);
  });

  it('never answers at hangRate 1, so a request with a timeout signal aborts', async () => {
    const { policy: hanging, client: hangingClient } = await startPolicy({});
    hanging.setFaults({ hangRate: 1 });
    const startedAt = Date.now();
    const failure = hangingClient.generate({ inputIds: prompt, maxNewTokens: 16, temperature: 1, signal: AbortSignal.timeout(300) });
    await expect(failure).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
    expect(hanging.stats().faults['hang']).toBe(1);
    expect(hanging.stats().completed).toBe(0);
  });

  it('answers normally again once faults are cleared', async () => {
    policy.setFaults({ errorRate: 1 });
    await expect(client.generate({ inputIds: prompt, maxNewTokens: 4, temperature: 1 })).rejects.toBeInstanceOf(PolicyUnavailable);
    policy.setFaults({ errorRate: 0 });
    const generation = await client.generate({ inputIds: prompt, maxNewTokens: 4, temperature: 1 });
    expect(generation.outputIds).toHaveLength(4);
  });

  it('reports an unreachable server as PolicyUnavailable naming the URL', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    const failure = new SglangClient(url).generate({ inputIds: prompt, maxNewTokens: 4, temperature: 1 });
    await expect(failure).rejects.toBeInstanceOf(PolicyUnavailable);
    await expect(failure).rejects.toThrow(`${url}/generate`);
  });
});

/** A port that nothing listens on: bind an ephemeral one, then release it. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/datasets/index.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { SglangBackend } from '../../src/policy/sglang-backend.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';
import { feedbackTokens, promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';

const problems: Problem[] = [{ qid: 'p-1', problem: 'What is $6 \\times 7$?', gold: ['42'], source: 'math' }];
const baseConfig: SimulatedPolicyConfig = { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS, tokensPerSecond: 1e6, seed: 11 };

let tok: ModelTokenizer;
let prompt: number[];
const started: RunningSimulatedPolicy[] = [];

beforeAll(async () => {
  tok = await loadModelTokenizer();
  prompt = promptIds(tok, problems[0]!.problem);
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((policy) => policy.close()));
});
afterAll(async () => {
  await Promise.all(started.splice(0).map((policy) => policy.close()));
});

async function start(overrides: Partial<SimulatedPolicyConfig> = {}): Promise<RunningSimulatedPolicy> {
  const policy = await startSimulatedPolicy(tok, new AnswerBook(problems), { ...baseConfig, ...overrides });
  started.push(policy);
  return policy;
}

interface Answer {
  output_ids: number[];
  meta_info: { prompt_tokens: number; cached_tokens: number; finish_reason: { type: string } };
}

async function generate(policy: RunningSimulatedPolicy, inputIds: number[], maxNewTokens = 1024): Promise<Answer> {
  const response = await fetch(`${policy.url}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input_ids: inputIds, sampling_params: { max_new_tokens: maxNewTokens }, return_logprob: true }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
}

/** The chunks of a streamed /generate, and when the first arrived (ms after the request was sent). */
async function generateStreamed(
  policy: RunningSimulatedPolicy,
  inputIds: number[],
  maxNewTokens = 1024,
): Promise<{ chunks: Answer[]; firstChunkMs: number }> {
  const sent = performance.now();
  const response = await fetch(`${policy.url}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input_ids: inputIds, sampling_params: { max_new_tokens: maxNewTokens }, return_logprob: true, stream: true }),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let firstChunkMs = -1;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (firstChunkMs < 0 && text.includes('data: {')) firstChunkMs = performance.now() - sent;
  }
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''));
  expect(events.at(-1)).toBe('[DONE]');
  return { chunks: events.slice(0, -1).map((event) => JSON.parse(event) as Answer), firstChunkMs };
}

/** One series of /metrics, with its labels, as a scraper reads it. */
async function metric(policy: RunningSimulatedPolicy, name: string): Promise<number> {
  const text = await (await fetch(`${policy.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  expect(line, `${name} in /metrics`).toBeDefined();
  expect(line).toContain('model_name="ratchet/simulated-policy"');
  return Number(line!.slice(line!.lastIndexOf(' ') + 1));
}

/** What vLLM caches of a finished request: the whole blocks of its prompt and every output token but the last. */
const cachedAfter = (promptLength: number, outputLength: number) => Math.floor((promptLength + outputLength - 1) / 16) * 16;

describe('simulated policy prefix cache', () => {
  it("hits the next turn's prompt, which extends the first turn's prompt and output, and counts it on /metrics", async () => {
    const policy = await start();
    const first = await generate(policy, prompt);
    expect(first.meta_info.cached_tokens).toBe(0);
    expect(first.meta_info.finish_reason.type).toBe('stop');

    const turn2 = [...prompt, ...first.output_ids, ...feedbackTokens(tok, false, true).ids];
    const expected = cachedAfter(prompt.length, first.output_ids.length);
    expect(expected).toBeGreaterThan(prompt.length);
    const { chunks } = await generateStreamed(policy, turn2);
    expect(chunks.every((chunk) => chunk.meta_info.cached_tokens === expected)).toBe(true);
    expect(chunks.at(-1)!.meta_info.prompt_tokens).toBe(turn2.length);

    expect(await metric(policy, 'vllm:prefix_cache_queries_total')).toBe(prompt.length + turn2.length);
    expect(await metric(policy, 'vllm:prefix_cache_hits_total')).toBe(expected);
    expect(await metric(policy, 'vllm:prompt_tokens_total')).toBe(prompt.length + turn2.length);
    expect(await metric(policy, 'vllm:generation_tokens_total')).toBe(policy.stats().generatedTokens);
    expect(policy.stats()).toMatchObject({
      promptTokens: prompt.length + turn2.length,
      prefixCacheQueries: prompt.length + turn2.length,
      prefixCacheHits: expected,
    });
  });

  it("writes /metrics as vLLM's prometheus_client does", async () => {
    const policy = await start();
    const response = await fetch(`${policy.url}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toContain(
      '# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.\n' +
        '# TYPE vllm:prefix_cache_queries_total counter\n' +
        'vllm:prefix_cache_queries_total{engine="0",model_name="ratchet/simulated-policy"} 0.0\n',
    );
    expect(text).toContain('vllm:prefix_cache_hits_total{engine="0",model_name="ratchet/simulated-policy"} 0.0\n');
  });

  it('answers the same tokens with the cache on or off, and reports nothing cached when it is off', async () => {
    const on = await start();
    const off = await start({ prefixCacheTokens: 0 });
    const [a, b] = [await generate(on, prompt), await generate(off, prompt)];
    expect(a.output_ids).toEqual(b.output_ids);
    const turn2 = [...prompt, ...a.output_ids, ...feedbackTokens(tok, false, true).ids];
    const [c, d] = [await generate(on, turn2), await generate(off, turn2)];
    expect(c.output_ids).toEqual(d.output_ids);
    expect(c.meta_info.cached_tokens).toBeGreaterThan(0);
    expect(d.meta_info.cached_tokens).toBe(0);
    expect(await metric(off, 'vllm:prefix_cache_queries_total')).toBe(0);
    expect(await metric(off, 'vllm:prefix_cache_hits_total')).toBe(0);
    expect(await metric(off, 'vllm:prompt_tokens_total')).toBe(prompt.length + turn2.length);
  });

  it('keeps one cache per server: a turn sent to another server misses', async () => {
    const [one, two] = [await start(), await start()];
    const first = await generate(one, prompt);
    const turn2 = [...prompt, ...first.output_ids, ...feedbackTokens(tok, true, true).ids];
    expect((await generate(two, turn2)).meta_info.cached_tokens).toBe(0);
    expect((await generate(one, turn2)).meta_info.cached_tokens).toBe(cachedAfter(prompt.length, first.output_ids.length));
  });

  it('waits the uncached prompt tokens at prefillTokensPerSecond before the first token', async () => {
    const policy = await start({ prefillTokensPerSecond: 2_000, chunkTokens: 1 });
    const filler = tok.encode(' The quick brown fox jumps over the lazy dog.'.repeat(60));
    const long = [...prompt, ...filler];
    const expectedMs = (long.length / 2_000) * 1000;
    expect(expectedMs).toBeGreaterThan(250);
    const cold = await generateStreamed(policy, long, 8);
    expect(cold.chunks[0]!.meta_info.cached_tokens).toBe(0);
    expect(cold.firstChunkMs).toBeGreaterThanOrEqual(0.8 * expectedMs);

    // The same prompt again, a token longer: all but that token's partial block is cached, so next to no prefill.
    const warm = await generateStreamed(policy, [...long, filler[0]!], 8);
    expect(warm.chunks[0]!.meta_info.cached_tokens).toBe(Math.floor(long.length / 16) * 16);
    expect(warm.firstChunkMs).toBeLessThan(0.5 * expectedMs);

    // Non-streaming: the whole answer waits for the prefill too.
    const sent = performance.now();
    const other = [...tok.encode('A different opening.'), ...filler];
    await generate(policy, other, 8);
    expect(performance.now() - sent).toBeGreaterThanOrEqual(0.8 * (other.length / 2_000) * 1000);
  });

  it('reaches the generate activity through the SGLang backend: a next turn on the same server reports its prefix cached', async () => {
    const policy = await start();
    const backend = new SglangBackend(policy.url);
    const ids: number[] = [];
    const first = await backend.generate({ inputIds: prompt, maxNewTokens: 64, sampling: DEFAULT_SAMPLING, requestId: 'turn-0' }, (chunk) =>
      ids.push(...chunk.ids),
    );
    expect(first.cachedTokens).toBe(0);
    const next = [...prompt, ...ids, ...prompt];
    const second = await backend.generate({ inputIds: next, maxNewTokens: 8, sampling: DEFAULT_SAMPLING, requestId: 'turn-1' }, () => undefined);
    expect(second.cachedTokens).toBeGreaterThan(0);
    expect(second.cachedTokens).toBeLessThanOrEqual(prompt.length + ids.length);
  });
});

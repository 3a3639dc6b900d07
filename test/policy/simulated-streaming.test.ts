import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/datasets/index.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';

const problems: Problem[] = [{ qid: 'p-1', problem: 'What is $6 \\times 7$?', gold: ['42'], source: 'math' }];

let policy: RunningSimulatedPolicy;
let prompt: number[];

beforeAll(async () => {
  const tokenizer = await loadModelTokenizer();
  policy = await startSimulatedPolicy(tokenizer, new AnswerBook(problems), {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    tokensPerSecond: 2000,
    chunkTokens: 5,
    seed: 3,
  });
  prompt = promptIds(tokenizer, problems[0]!.problem);
});
afterAll(async () => {
  await policy?.close();
});

/** The raw `data:` payloads of one streamed /generate. */
async function streamEvents(body: Record<string, unknown>, signal?: AbortSignal): Promise<string[]> {
  const response = await fetch(`${policy.url}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  return (await response.text())
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''));
}

describe('simulated policy streaming wire protocol', () => {
  it('streams chunkTokens tokens an event, cumulative as SGLang by default, then [DONE]', async () => {
    const events = await streamEvents({
      input_ids: prompt,
      sampling_params: { max_new_tokens: 12 },
      return_logprob: true,
      stream: true,
      rid: 'wire-1',
    });
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.output_ids.length)).toEqual([5, 10, 12]);
    expect(chunks.map((c) => c.meta_info.completion_tokens)).toEqual([5, 10, 12]);
    expect(chunks.map((c) => c.meta_info.finish_reason)).toEqual([null, null, { type: 'length', length: 12 }]);
    expect(chunks[2].output_ids.slice(0, 5)).toEqual(chunks[0].output_ids);
    expect(chunks[2].meta_info.output_token_logprobs.map((e: unknown[]) => e[1])).toEqual(chunks[2].output_ids);
    expect(chunks.every((c) => c.meta_info.weight_version === String(policy.stats().weightVersion))).toBe(true);
  });

  it('reports the context window in /get_model_info', async () => {
    const info = (await (await fetch(`${policy.url}/get_model_info`)).json()) as { context_length: number };
    expect(info.context_length).toBe(DEFAULT_SIMULATED_POLICY.contextWindow);
  });

  it('sets the version named by weight_version, and counts one up without it', async () => {
    const update = (body: unknown) =>
      fetch(`${policy.url}/update_weights_from_disk`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await update({ model_path: '/ckpt/40', weight_version: '40' })).status).toBe(200);
    expect(policy.stats().weightVersion).toBe(40);
    await update({ model_path: '/ckpt/41' });
    expect(policy.stats().weightVersion).toBe(41);
    expect((await update({ weight_version: '42' })).status).toBe(400);
  });

  it('stops generating when the client goes away, counting only the tokens it sent', async () => {
    const before = policy.stats().generatedTokens;
    const controller = new AbortController();
    const response = await fetch(`${policy.url}/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      signal: controller.signal,
      body: JSON.stringify({ input_ids: prompt, sampling_params: { max_new_tokens: 1024 }, return_logprob: true, stream: true, rid: 'leaver' }),
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect.poll(() => policy.stats().recent.find((r) => r.rid === 'leaver')?.end).toBe('disconnect');
    const record = policy.stats().recent.find((r) => r.rid === 'leaver')!;
    expect(policy.stats().generatedTokens - before).toBe(record.sentIds.length);
    expect(record.sentIds.length).toBeLessThan(60);
  });
});

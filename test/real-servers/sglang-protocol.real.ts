import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SglangBackend } from '../../src/policy/sglang-backend.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { startFakeSglang } from '../policy/fakes/fake-sglang.js';
import { startRecordingProxy } from './recording-proxy.js';
import { VLLM_PYTHON } from '../../src/stack/vllm-server.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

/** SGLang's own definitions, read from the pinned `sglang` package by scripts/vllm/sglang_protocol.py. */
interface SglangProtocol {
  GenerateReqInput: string[];
  UpdateWeightFromDiskReqInput: string[];
  AbortReq: string[];
  SamplingParams: string[];
  output: string[];
  meta_info: string[];
}

let protocol: SglangProtocol;
beforeAll(async () => {
  const script = path.resolve(import.meta.dirname, '../../scripts/vllm/sglang_protocol.py');
  const { stdout } = await promisify(execFile)(VLLM_PYTHON, [script]);
  protocol = JSON.parse(stdout) as SglangProtocol;
  // The definitions were found at all: a parse that returned nothing would make every check below vacuous.
  expect(protocol.GenerateReqInput).toEqual(expect.arrayContaining(['input_ids', 'sampling_params', 'return_logprob', 'stream', 'rid']));
  expect(protocol.meta_info).toEqual(expect.arrayContaining(['finish_reason', 'weight_version', 'output_token_logprobs']));
});

const problem = 'What is $6 \\times 7$?';

/** Each server speaking SGLang's protocol in this project: the test fake and the simulated policy. */
const servers = {
  'the SGLang fake (cumulative)': async () => startFakeSglang({ incremental: false }),
  'the SGLang fake (incremental)': async () => startFakeSglang({ incremental: true }),
  'the simulated policy': async () => {
    const tokenizer = await loadModelTokenizer();
    return startSimulatedPolicy(tokenizer, new AnswerBook([{ qid: 'p', problem, gold: ['42'], source: 'math' }]), {
      ...DEFAULT_SIMULATED_POLICY,
      faults: NO_FAULTS,
      tokensPerSecond: 2_000,
      seed: 3,
    });
  },
};

for (const [name, start] of Object.entries(servers)) {
  describe(`SglangBackend and ${name} speak SGLang's own protocol (sglang package)`, () => {
    let server: Awaited<ReturnType<typeof start>>;
    let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
    let backend: SglangBackend;
    beforeAll(async () => {
      server = await start();
      proxy = await startRecordingProxy(server.url);
      backend = new SglangBackend(proxy.url);
    });
    afterAll(async () => {
      await proxy?.close();
      await server?.close();
    });

    it('sends /generate bodies whose every field is a GenerateReqInput field, and sampling_params SamplingParams fields', async () => {
      const tokenizer = await loadModelTokenizer();
      await backend.generate(
        { inputIds: promptIds(tokenizer, problem), maxNewTokens: 32, sampling: { ...DEFAULT_SAMPLING, temperature: 0.7 }, requestId: 'protocol-1' },
        () => undefined,
      );
      const bodies = proxy
        .requests()
        .filter((r) => r.path === '/generate')
        .map((r) => r.body as Record<string, unknown>);
      expect(bodies.length).toBeGreaterThan(0);
      for (const body of bodies) {
        expect(protocol.GenerateReqInput).toEqual(expect.arrayContaining(Object.keys(body)));
        expect(protocol.SamplingParams).toEqual(expect.arrayContaining(Object.keys(body['sampling_params'] as object)));
      }
    });

    it("sends the logprob probe's one-token /generate with only GenerateReqInput and SamplingParams fields", async () => {
      // The fakes answer no top logprobs: only the request's shape is checked against them.
      await backend
        .topLogprobs({ inputIds: [785, 6722, 315], sampling: { ...DEFAULT_SAMPLING, topK: 2 }, count: 8, requestId: 'protocol-probe' })
        .catch(() => undefined);
      const body = proxy
        .requests()
        .filter((r) => r.path === '/generate')
        .map((r) => r.body as Record<string, unknown>)
        .find((b) => b['rid'] === 'protocol-probe')!;
      expect(body).toMatchObject({ return_logprob: true, top_logprobs_num: 8, stream: false });
      expect(protocol.GenerateReqInput).toEqual(expect.arrayContaining(Object.keys(body)));
      expect(protocol.SamplingParams).toEqual(expect.arrayContaining(Object.keys(body['sampling_params'] as object)));
    });

    it('sends weight updates and aborts with only UpdateWeightFromDiskReqInput and AbortReq fields', async () => {
      await backend.updateWeights(3, '/checkpoints/step-3');
      await backend.abort('protocol-none');
      const update = proxy.requests().find((r) => r.path === '/update_weights_from_disk')!.body as object;
      const abort = proxy.requests().find((r) => r.path === '/abort_request')!.body as object;
      expect(protocol.UpdateWeightFromDiskReqInput).toEqual(expect.arrayContaining(Object.keys(update)));
      expect(protocol.AbortReq).toEqual(expect.arrayContaining(Object.keys(abort)));
    });

    it('streams only keys TokenizerManager emits, at the top level and in meta_info', async () => {
      const tokenizer = await loadModelTokenizer();
      const response = await fetch(`${server.url}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          input_ids: promptIds(tokenizer, problem),
          sampling_params: { max_new_tokens: 24, temperature: 1 },
          return_logprob: true,
          stream: true,
          rid: 'protocol-2',
        }),
      });
      const events = (await response.text())
        .split('\n\n')
        .map((e) => e.replace(/^data: /, ''))
        .filter((e) => e !== '' && e !== '[DONE]');
      expect(events.length).toBeGreaterThan(1);
      for (const event of events) {
        const chunk = JSON.parse(event) as { meta_info: Record<string, unknown> };
        expect(protocol.output).toEqual(expect.arrayContaining(Object.keys(chunk)));
        expect(protocol.meta_info).toEqual(expect.arrayContaining(Object.keys(chunk.meta_info)));
      }
    });
  });
}

describe('the simulated policy answers a top-logprobs query as TokenizerManager names it', () => {
  it('puts output_top_logprobs, a meta_info key of the sglang package, in its answer', async () => {
    const tokenizer = await loadModelTokenizer();
    const policy = await startSimulatedPolicy(tokenizer, new AnswerBook([]), {
      ...DEFAULT_SIMULATED_POLICY,
      faults: NO_FAULTS,
      tokensPerSecond: 2_000,
    });
    try {
      const response = await fetch(`${policy.url}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input_ids: [785, 6722, 315], sampling_params: { max_new_tokens: 1 }, return_logprob: true, top_logprobs_num: 4 }),
      });
      const answer = (await response.json()) as { meta_info: Record<string, unknown> };
      expect(protocol.meta_info).toEqual(expect.arrayContaining(Object.keys(answer.meta_info)));
      expect(answer.meta_info['output_top_logprobs']).toHaveLength(1);
    } finally {
      await policy.close();
    }
  });
});

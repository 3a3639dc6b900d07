import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { decodeVllmChunk } from '../../src/policy/vllm-stream-decoder.js';
import { CheckpointRefused } from '../../src/policy/weights-proof.js';
import { runBackendContract } from './backend-contract.case.js';
import { FAKE_VLLM_MODEL, startFakeVllm } from './fakes/fake-vllm.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

runBackendContract('VllmBackend', async () => {
  const fake = await startFakeVllm();
  return {
    backend: new VllmBackend(fake.url),
    backendAt: (url) => new VllmBackend(url),
    prompt: [151644, 872, 198, 3838, 374, 220, 21, 24768, 220, 22, 30, 151645],
    contextWindow: fake.maxModelLen,
    reportsWeightVersion: false,
    checkpoint: (version) => `/checkpoints/step-${version}`,
    served: (requestId) => {
      const record = fake.served(requestId);
      return record && { prompt: record.body['prompt'], sentIds: record.sentIds, sentLogprobs: record.sentLogprobs, end: record.end };
    },
    setFault: fake.setFault,
    close: fake.close,
  };
});

describe('VllmBackend against fake vLLM', () => {
  let fake: Awaited<ReturnType<typeof startFakeVllm>>;
  let backend: VllmBackend;
  beforeAll(async () => {
    fake = await startFakeVllm();
    backend = new VllmBackend(fake.url);
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('asks for token-id prompts, logprobs and token ids back, under the served model name, with every sampling parameter', async () => {
    const sampling = { temperature: 0.7, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1.1 };
    await backend.generate({ inputIds: [1, 2, 3], maxNewTokens: 4, sampling, requestId: 'turn-1/0' }, () => undefined);
    expect(fake.served('turn-1/0')!.body).toEqual({
      model: FAKE_VLLM_MODEL,
      prompt: [1, 2, 3],
      max_tokens: 4,
      temperature: 0.7,
      top_p: 0.95,
      top_k: 20,
      min_p: 0.05,
      repetition_penalty: 1.1,
      presence_penalty: 0,
      frequency_penalty: 0,
      logprobs: 1,
      return_tokens_as_token_ids: true,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("sends the seed's sampling in full, so no generation_config.json default applies (top_k -1: off)", async () => {
    await backend.generate({ inputIds: [1, 2, 3], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'seed-sampling' }, () => undefined);
    expect(fake.served('seed-sampling')!.body).toMatchObject({
      temperature: 1,
      top_p: 1,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
    });
  });

  it('reloads weights through pause, collective_rpc reload_weights, prefix-cache reset, a version tag and resume', async () => {
    expect(await backend.servedWeightVersion()).toBe('default');
    await backend.updateWeights(5, '/checkpoints/step-5');
    // Ratchet's checked reload first; a server without the extension answers 500 naming it, once: vLLM's own after that.
    expect(fake.devCalls().slice(-6)).toEqual([
      '/pause?mode=abort',
      '/collective_rpc',
      '/collective_rpc',
      '/reset_prefix_cache',
      '/update_weight_version',
      '/resume',
    ]);
    expect(
      fake
        .rpcCalls()
        .slice(-2)
        .map((call) => call.method),
    ).toEqual(['ratchet_reload_weights', 'reload_weights']);
    expect(fake.rpcCalls().at(-1)).toEqual({ method: 'reload_weights', args: [], kwargs: { weights_path: '/checkpoints/step-5' } });
    expect(await backend.servedWeightVersion()).toBe('5');
    await backend.updateWeights(6, '/checkpoints/step-6');
    expect(fake.rpcCalls().at(-2)!.method).toBe('reload_weights');
  });

  it("reloads through Ratchet's worker extension where the server has it, and types the checkpoint it refuses", async () => {
    const extended = await startFakeVllm({ workerExtension: true });
    try {
      const checked = new VllmBackend(extended.url);
      await checked.updateWeights(5, '/checkpoints/step-5');
      expect(extended.rpcCalls().map((call) => call.method)).toEqual(['ratchet_reload_weights']);
      const refused = checked.updateWeights(6, '/checkpoints/missing');
      await expect(refused).rejects.toBeInstanceOf(CheckpointRefused);
      await expect(refused).rejects.toThrow('/checkpoints/missing: not a readable directory');
      expect(extended.devCalls().at(-1)).toBe('/resume'); // the server is resumed, serving what it had
    } finally {
      await extended.close();
    }
  });

  it('explains that a weight update needs VLLM_SERVER_DEV_MODE when the server lacks /collective_rpc', async () => {
    const plain = await startFakeVllm({ devMode: false });
    try {
      const failure = new VllmBackend(plain.url).updateWeights(6, '/checkpoints/step-6');
      await expect(failure).rejects.toBeInstanceOf(PolicyRejectedRequest);
      await expect(failure).rejects.toThrow(/VLLM_SERVER_DEV_MODE=1/);
    } finally {
      await plain.close();
    }
  });

  it("reports a 400 error body as PolicyRejectedRequest carrying vLLM's message", async () => {
    const failure = backend.generate(
      { inputIds: Array(4097).fill(1), maxNewTokens: 10, sampling: DEFAULT_SAMPLING, requestId: 'too-long' },
      () => undefined,
    );
    await expect(failure).rejects.toBeInstanceOf(PolicyRejectedRequest);
    await expect(failure).rejects.toThrow(/HTTP 400.*maximum context length is 4096 tokens/s);
  });

  it('gets max_tokens capped to the room the window leaves, as vLLM does, instead of a refusal', async () => {
    const chunks: number[] = [];
    const end = await backend.generate(
      { inputIds: Array(4090).fill(1), maxNewTokens: 100, sampling: DEFAULT_SAMPLING, requestId: 'capped' },
      (chunk) => chunks.push(...chunk.ids),
    );
    expect(end.finishReason).toBe('length');
    expect(chunks).toHaveLength(6);
  });

  it('asks /v1/models again after the server answers 404 for the model it used to serve (restarted on another checkpoint)', async () => {
    const restarted = await startFakeVllm();
    try {
      const client = new VllmBackend(restarted.url);
      await client.generate({ inputIds: [1, 2], maxNewTokens: 2, sampling: DEFAULT_SAMPLING, requestId: 'before' }, () => undefined);
      restarted.setModel('/checkpoints/step-9');
      await expect(
        client.generate({ inputIds: [1, 2], maxNewTokens: 2, sampling: DEFAULT_SAMPLING, requestId: 'renamed' }, () => undefined),
      ).rejects.toBeInstanceOf(PolicyUnavailable);
      await client.generate({ inputIds: [1, 2], maxNewTokens: 2, sampling: DEFAULT_SAMPLING, requestId: 'after' }, () => undefined);
      expect(restarted.served('after')!.body['model']).toBe('/checkpoints/step-9');
    } finally {
      await restarted.close();
    }
  });

  it("reloads the served model's own directory for a version published without weights", async () => {
    await backend.updateWeights(7);
    expect(fake.rpcCalls().at(-1)).toEqual({ method: 'reload_weights', args: [], kwargs: { weights_path: FAKE_VLLM_MODEL } });
  });

  it('refuses streamed tokens that are text instead of token ids', () => {
    const chunk = { choices: [{ index: 0, text: 'Hi', logprobs: { tokens: ['Hi'], token_logprobs: [-0.1] }, finish_reason: null }] };
    expect(() => decodeVllmChunk('http://vllm', chunk)).toThrow(PolicyProtocolError);
  });

  it('reads an error event in either form, and a payload that is neither an error event nor a chunk as malformed', () => {
    const decode = (json: unknown) => () => decodeVllmChunk('http://vllm', json);
    expect(decode({ error: { message: 'prompt too long', type: 'BadRequestError', param: null, code: 400 } })).toThrow(PolicyRejectedRequest);
    expect(decode({ error: { message: 'engine dead', code: 'internal' } })).toThrow('error in stream (code internal): engine dead');
    expect(decode({ object: 'error', message: 'overloaded', type: 'ServiceUnavailable', code: 503 })).toThrow(PolicyUnavailable);
    expect(decode({ object: 'error', message: 'no such model', code: 404 })).toThrow(PolicyRejectedRequest);
    expect(decode({ error: { message: 5 } })).toThrow(PolicyProtocolError);
    expect(decode({ object: 'error', message: null })).toThrow(PolicyProtocolError);
    expect(decode(['error'])).toThrow(PolicyProtocolError);
    const finish = { choices: [{ index: 0, logprobs: { tokens: ['token_id:7'], token_logprobs: [-0.5] }, finish_reason: 'stop' }] };
    expect(decodeVllmChunk('http://vllm', { ...finish, error: null, object: 'text_completion' })).toEqual({
      chunk: { ids: [7], logprobs: [-0.5] },
      finishReason: 'stop',
    });
  });
});

describe('vLLM prefix-cache hits (issue 27)', () => {
  // As vLLM 0.32 streams it (completion/serving.py, exclude_none): the usage chunk after the finish reason, with
  // prompt_tokens_details only on a server started with --enable-prompt-tokens-details.
  const finishChunk = {
    id: 'cmpl-9d1c',
    object: 'text_completion',
    created: 1764100000,
    model: 'Qwen/Qwen3-0.6B',
    choices: [
      {
        index: 0,
        text: '',
        logprobs: { text_offset: [0], token_logprobs: [-0.25], tokens: ['token_id:151645'], top_logprobs: [{ 'token_id:151645': -0.25 }] },
        finish_reason: 'stop',
        stop_reason: null,
      },
    ],
  };
  const usageChunk = {
    id: 'cmpl-9d1c',
    object: 'text_completion',
    created: 1764100000,
    model: 'Qwen/Qwen3-0.6B',
    choices: [],
    usage: { prompt_tokens: 52, total_tokens: 60, completion_tokens: 8, prompt_tokens_details: { cached_tokens: 48 } },
  };

  it('reads cached_tokens from the usage chunk, and nothing from one without prompt_tokens_details', () => {
    expect(decodeVllmChunk('http://vllm', usageChunk)).toEqual({ cachedTokens: 48 });
    expect(decodeVllmChunk('http://vllm', { ...usageChunk, usage: { prompt_tokens: 52, total_tokens: 60, completion_tokens: 8 } })).toEqual({});
    expect(decodeVllmChunk('http://vllm', { ...usageChunk, usage: { ...usageChunk.usage, prompt_tokens_details: null } })).toEqual({});
    expect(decodeVllmChunk('http://vllm', finishChunk)).toEqual({ chunk: { ids: [151645], logprobs: [-0.25] }, finishReason: 'stop' });
  });

  it("asks for the usage chunk and reports the server's cached prompt tokens per request", async () => {
    const fake = await startFakeVllm({ promptTokensDetails: true, outputLength: 4 });
    try {
      const backend = new VllmBackend(fake.url);
      const prompt = Array.from({ length: 40 }, (_, i) => 1000 + i);
      const first = await backend.generate({ inputIds: prompt, maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'cache-1' }, () => undefined);
      const second = await backend.generate(
        { inputIds: [...prompt, 7, 7], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'cache-2' },
        () => undefined,
      );
      expect(first).toEqual({ finishReason: 'stop', cachedTokens: 0 });
      expect(second).toEqual({ finishReason: 'stop', cachedTokens: 32 });
    } finally {
      await fake.close();
    }
  });

  it('reports none from a server started without --enable-prompt-tokens-details', async () => {
    const fake = await startFakeVllm({ outputLength: 4 });
    try {
      const end = await new VllmBackend(fake.url).generate(
        { inputIds: [1, 2, 3], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: 'no-details' },
        () => undefined,
      );
      expect(end).toEqual({ finishReason: 'stop' });
    } finally {
      await fake.close();
    }
  });

  it('keeps a finished turn whose connection drops, or whose usage chunk is garbled, after the finish reason', async () => {
    for (const after of ['drop', 'garbled'] as const) {
      const server = http.createServer((request, response) => {
        if (request.url === '/v1/models') return void response.end(JSON.stringify({ data: [{ id: 'Qwen/Qwen3-0.6B', max_model_len: 4096 }] }));
        request.resume();
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify(finishChunk)}\n\n`);
        if (after === 'drop') setTimeout(() => response.socket?.destroy(), 20);
        else response.end('data: {"choices": "not a list"}\n\ndata: [DONE]\n\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const ids: number[] = [];
        const end = await new VllmBackend(`http://127.0.0.1:${(server.address() as AddressInfo).port}`).generate(
          { inputIds: [1, 2, 3], maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: after },
          (chunk) => ids.push(...chunk.ids),
        );
        expect([after, end, ids]).toEqual([after, { finishReason: 'stop' }, [151645]]);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });
});

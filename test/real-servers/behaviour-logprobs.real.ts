import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeServedLogprobs } from '../../src/policy/logprob-probe.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { startVllm, stopStartedServers } from '../../src/stack/vllm-server.js';

let stack: TestStack;
let stopCpuWorker: () => Promise<void>;

// A vLLM started without --logprobs-mode processed_logprobs (parity.real.ts checks one started with it).
beforeAll(async () => {
  stack = await startTestStack();
  stopCpuWorker = await stack.startWorkers({ gpu: false });
});

afterAll(async () => {
  await stopCpuWorker?.();
  await stopStartedServers();
  await stack?.stop();
});

describe('behaviour logprobs against a real vLLM', () => {
  it('refuses T = 0.7 on a vLLM started without --logprobs-mode processed_logprobs, and still serves T = 1', async () => {
    const vllm = await startVllm({ rawLogprobs: true });
    const stopGpuWorker = await stack.startWorkers({ cpu: false, backend: new VllmBackend(vllm.url) });
    try {
      expect(await probeServedLogprobs(new VllmBackend(vllm.url))).toMatchObject({ temperature: 'ignored', truncation: 'ignored' });
      const [tempered] = await runRollouts(
        stack.client,
        trajectoryRequests('raw-tempered', stack.problems.slice(0, 1), 1, { turns: 1, maxNewTokens: 16, temperature: 0.7 }),
      );
      expect(tempered).toMatchObject({ status: 'failed', failureType: 'RawLogprobsServer', failureClass: 'infrastructure' });
      expect(tempered!.error).toMatch(/--logprobs-mode processed_logprobs/);
      const [refused] = await stack.exported('raw-tempered/', { includeFailed: true });
      expect(refused).toMatchObject({ status: 'failed', failure_type: 'RawLogprobsServer', failure_class: 'infrastructure', packed_logprobs: [] });

      const [plain] = await runRollouts(stack.client, trajectoryRequests('raw-plain', stack.problems.slice(0, 1), 1, { turns: 1, maxNewTokens: 16 }));
      expect(plain!.status).toBe('completed');
      const [row] = await stack.exported('raw-plain/');
      expect(row).toMatchObject({ temperature: 1, top_p: 1, top_k: -1 });
    } finally {
      await stopGpuWorker();
      await vllm.stop();
    }
  });
});

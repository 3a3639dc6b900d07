import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeServedLogprobs } from '../../src/policy/logprob-probe.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { runRollouts } from '../../src/rollout/run-rollouts.js';
import { trajectoryRequests } from '../../src/rollout/submit.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { expectSeedInvariants } from '../integration/seed-invariants.js';
import { POLICY_MODELS, startVllm, stopStartedServers, VLLM_PYTHON, type RunningVllm } from './vllm-server.js';

const RECOMPUTE = path.join(import.meta.dirname, 'recompute_logprobs.py');

let stack: TestStack;
let stopCpuWorker: () => Promise<void>;

// One Temporal + Postgres for the file; a vLLM started with --logprobs-mode processed_logprobs, then one without.
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
  it('stores at T = 0.7 the logprobs of the tempered distribution, as transformers recomputes them with the same weights', async () => {
    // float32, so that the recomputation's kernels differ from vLLM's by rounding only.
    const vllm = await startVllm({ dtype: 'float32' });
    const stopGpuWorker = await stack.startWorkers({ cpu: false, backend: new VllmBackend(vllm.url) });
    try {
      expect(await probeServedLogprobs(new VllmBackend(vllm.url))).toMatchObject({ temperature: 'applied', truncation: 'applied' });
      const problems = stack.problems.slice(0, 4);
      const results = await runRollouts(stack.client, trajectoryRequests('tempered', problems, 1, { turns: 2, maxNewTokens: 32, temperature: 0.7 }));
      expect(results.map((r) => r.status)).toEqual(problems.map(() => 'completed'));
      const rows = await stack.exported('tempered/');
      for (const row of rows) {
        expectSeedInvariants(row, stack.tokenizer);
        expect(row).toMatchObject({ temperature: 0.7, top_p: 1, top_k: -1, min_p: 0, repetition_penalty: 1 });
      }
      const parity = await recomputed(rows);
      console.log(`T = 0.7, ${parity.tokens} tokens: |stored - recomputed at T = 0.7| mean ${parity.at_sampling.mean.toExponential(2)}, `
        + `p99 ${parity.at_sampling.p99.toExponential(2)}, max ${parity.at_sampling.max.toExponential(2)}; `
        + `|stored - untempered| mean ${parity.untempered.mean.toFixed(3)}, p99 ${parity.untempered.p99.toFixed(3)}`);
      expect(parity.tokens).toBeGreaterThan(200);
      expect(parity.at_sampling.mean).toBeLessThan(1e-3);
      expect(parity.at_sampling.max).toBeLessThan(1e-2);
      // What a raw server would have stored is far off: the check can tell the two apart.
      expect(parity.untempered.mean).toBeGreaterThan(100 * parity.at_sampling.mean);
    } finally {
      await stopGpuWorker();
      await vllm.stop();
    }
  });

  it('refuses T = 0.7 on a vLLM started without --logprobs-mode processed_logprobs, and still serves T = 1', async () => {
    const vllm = await startVllm({ rawLogprobs: true });
    const stopGpuWorker = await stack.startWorkers({ cpu: false, backend: new VllmBackend(vllm.url) });
    try {
      expect(await probeServedLogprobs(new VllmBackend(vllm.url))).toMatchObject({ temperature: 'ignored', truncation: 'ignored' });
      const [tempered] = await runRollouts(stack.client, trajectoryRequests('raw-tempered', stack.problems.slice(0, 1), 1, { turns: 1, maxNewTokens: 16, temperature: 0.7 }));
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

interface Deviation {
  mean: number;
  p99: number;
  max: number;
}

/** Runs recompute_logprobs.py over the rows with the served model's weights. */
async function recomputed(rows: readonly object[]): Promise<{ tokens: number; at_sampling: Deviation; untempered: Deviation }> {
  const child = promisify(execFile)(VLLM_PYTHON, [RECOMPUTE, POLICY_MODELS[0]!], { maxBuffer: 1 << 20, env: { ...process.env, HF_HUB_OFFLINE: '1' } });
  child.child.stdin!.end(rows.map((row) => JSON.stringify(row)).join('\n'));
  return JSON.parse((await child).stdout) as { tokens: number; at_sampling: Deviation; untempered: Deviation };
}

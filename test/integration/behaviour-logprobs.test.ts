import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/policy/backend-config.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { expectSeedInvariants } from '../../scripts/support/seed-invariants.js';

// The simulated policy returns processed logprobs; a second one, started in `raw` mode, stands in for a vLLM started
// without --logprobs-mode processed_logprobs (test/real-servers/behaviour-logprobs.real.ts runs both for real).
let stack: TestStack;
let rawPolicy: RunningSimulatedPolicy;
let stopCpuWorker: () => Promise<void>;

beforeAll(async () => {
  stack = await startTestStack({ tokensPerSecond: 2_000 });
  rawPolicy = await startSimulatedPolicy(stack.tokenizer, new AnswerBook(stack.problems), {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    tokensPerSecond: 2_000,
    logprobs: 'raw',
  });
  stopCpuWorker = await stack.startWorkers({ gpu: false });
});

afterAll(async () => {
  await stopCpuWorker?.();
  await rawPolicy?.close();
  await stack?.stop();
});

const SAMPLED = { turns: 2, maxNewTokens: 64, temperature: 0.7, topP: 0.98, topK: 40, minP: 0.01 };

describe('behaviour logprobs through the workflow', () => {
  it('stores what a processed server returned at T = 0.7 with truncation, and the sampling with the row', async () => {
    const stopGpuWorker = await stack.startWorkers({ cpu: false });
    try {
      const problems = stack.problems.slice(0, 2);
      const results = await runRollouts(stack.client, trajectoryRequests('sampled', problems, 1, SAMPLED));
      expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
      for (const row of await stack.exported('sampled/')) {
        expectSeedInvariants(row, stack.tokenizer);
        expect(row).toMatchObject({ temperature: 0.7, top_p: 0.98, top_k: 40, min_p: 0.01, repetition_penalty: 1 });
        // Every sent request carried the whole sampling; the stored logprobs are the ones the server sent.
        const served = stack.policy.stats().recent.filter((r) => r.rid.startsWith(`${row.trajectory_id}/`));
        expect(served.flatMap((r) => r.sentLogprobs).map(Math.fround)).toEqual(outputLogprobs(row));
        expect(outputLogprobs(row).some((lp) => lp < -0.01)).toBe(true);
      }
    } finally {
      await stopGpuWorker();
    }
  });

  it('refuses T = 0.7 on a server whose logprobs are raw, as a typed infrastructure failure, and serves T = 1 from it', async () => {
    const stopGpuWorker = await stack.startWorkers({ cpu: false, backend: createBackend('sglang', rawPolicy.url) });
    try {
      const generateRequests = () => rawPolicy.stats().recent.filter((r) => !r.rid.startsWith('ratchet-logprob-probe/')).length;
      const [refused] = await runRollouts(stack.client, trajectoryRequests('raw-sampled', stack.problems.slice(2, 3), 1, SAMPLED));
      expect(refused).toMatchObject({ status: 'failed', failureType: 'RawLogprobsServer', failureClass: 'infrastructure' });
      expect(refused!.error).toMatch(/ignore temperature and penalties/);
      expect(generateRequests()).toBe(0);
      const [plain] = await runRollouts(stack.client, trajectoryRequests('raw-plain', stack.problems.slice(2, 3), 1, { turns: 1 }));
      expect(plain!.status).toBe('completed');
      expect(generateRequests()).toBe(1);
    } finally {
      await stopGpuWorker();
    }
  });
});

/** The stored logprob of every generated token, in order: sequence by sequence, L − 1 logprobs for L tokens. */
function outputLogprobs(row: ExportedTrajectory): number[] {
  const logprobs: number[] = [];
  let start = 0;
  let logprobStart = 0;
  for (const length of row.seqlens) {
    for (let j = 1; j < length; j++) if (!row.prompt_mask[start + j]) logprobs.push(row.packed_logprobs[logprobStart + j - 1]!);
    start += length;
    logprobStart += length - 1;
  }
  return logprobs;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src/policy/backend-config.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { runRollouts } from '../../src/rollout/run-rollouts.js';
import { trajectoryRequests } from '../../src/rollout/submit.js';
import { freePort } from '../../src/stack/free-port.js';
import { publishPolicyVersion } from '../../src/store/policy-versions.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;
let policy: RunningSimulatedPolicy | undefined;
let port: number;

const startPolicy = () => startSimulatedPolicy(stack.tokenizer, new AnswerBook(stack.problems), { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS }, { port });

async function waitFor(what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  stack = await startTestStack();
  port = await freePort();
});

afterAll(async () => {
  await policy?.close();
  await stack?.stop();
});

describe('an inference server restarted on its initial weights', () => {
  it('gets the newest policy version loaded again before the GPU worker takes tasks, and tokens carry that version', { timeout: 120_000 }, async () => {
    policy = await startPolicy();
    await publishPolicyVersion(stack.pool, 1);
    await publishPolicyVersion(stack.pool, 2);
    const stopWorkers = await stack.startWorkers({ backend: createBackend('sglang', `http://127.0.0.1:${port}`) });
    try {
      await waitFor('version 2 loaded', () => policy!.stats().weightVersion === 2);

      // The server goes away for a while and comes back serving what it started with.
      await policy.close();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      policy = await startPolicy();
      expect(policy.stats().weightVersion).toBe(0);
      await waitFor('version 2 loaded again after the restart', () => policy!.stats().weightVersion === 2);

      const results = await runRollouts(stack.client, trajectoryRequests('restarted', stack.problems.slice(0, 2), 1, { turns: 2 }));
      expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
      const rows = await stack.exported('restarted/');
      for (const row of rows) expect(new Set(row.token_versions.filter((v) => v >= 0))).toEqual(new Set([2]));
    } finally {
      await stopWorkers();
    }
  });
});

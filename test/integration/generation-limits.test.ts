import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { expectSeedInvariants, expectTokenVersions } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';

const CONTEXT_WINDOW = 700;
let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  // A small model window: answers of at least ~200 tokens exhaust it within three turns, whatever the draws.
  stack = await startTestStack({ contextWindow: CONTEXT_WINDOW, reasoningTokens: 400, seed: 4 });
  stopWorkers = await stack.startWorkers();
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

describe('generation limits', () => {
  it('caps each turn to what the context window has left and ends the trajectory when it is exhausted', async () => {
    const results = await runRollouts(stack.client, trajectoryRequests('window', stack.problems.slice(0, 4), 1, { maxNewTokens: 1024 }));
    expect(results.map((r) => [r.status, r.endReason])).toEqual(Array(4).fill(['completed', 'context_exhausted']));
    // A turn gets only what the window has left, so a long answer is cut off at exactly the window.
    const turns = results.flatMap((r) => r.turns);
    expect(turns.every((t) => t.contextLen + t.outputLen <= CONTEXT_WINDOW)).toBe(true);
    expect(turns.some((t) => t.finishReason === 'length' && t.contextLen + t.outputLen === CONTEXT_WINDOW)).toBe(true);
    for (const row of await stack.exported('window/')) {
      expect(row.end_reason).toBe('context_exhausted');
      expect(Math.max(...row.seqlens)).toBeLessThanOrEqual(CONTEXT_WINDOW);
      expectSeedInvariants(row, stack.tokenizer);
      expectTokenVersions(row);
    }
  });

  it('fails a trajectory whose server rejects the request, without retrying, and records the failure', async () => {
    stack.policy.setFaults({ rejectRate: 1 });
    try {
      const [request] = trajectoryRequests('rejected', stack.problems.slice(4, 5), 1, { turns: 2 });
      const { handle } = await submitTrajectory(stack.client, request!);
      const error = await handle.result().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause?.message).toMatch(/rejected the request \(HTTP 400\)/);
      expect(stack.policy.stats().faults.reject).toBe(1);
      const [row] = await stack.exported('rejected/', { includeFailed: true });
      expect(row).toMatchObject({ status: 'failed', rewards: [], end_reason: null });
      expect(row!.error).toMatch(/HTTP 400/);
    } finally {
      stack.policy.setFaults({ rejectRate: 0 });
    }
  });

  it('stops taking generation tasks while the server is unhealthy and finishes them once it recovers', async () => {
    stack.policy.setFaults({ unhealthy: true });
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the health gate notices within its interval
    const requestsBefore = stack.policy.stats().requests;
    const running = runRollouts(stack.client, trajectoryRequests('outage', stack.problems.slice(5, 8), 1, { turns: 2 }));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(stack.policy.stats().requests).toBe(requestsBefore);
    stack.policy.setFaults({ unhealthy: false });
    const results = await running;
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ seed: 5 });
  // One slot: a slot kept for a returning turn is the only one there is.
  await stack.startWorkers({ slots: 1 });
});

afterAll(async () => {
  await stack?.stop();
});

describe('a run without turn affinity', () => {
  it('never keeps a GPU slot for a returning turn: each next turn starts as soon as the slot is free', { timeout: 120_000 }, async () => {
    const requests = trajectoryRequests('no-affinity', stack.problems.slice(0, 2), 1, { turns: 3, turnAffinity: false });
    const results = await runRollouts(stack.client, requests);
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed']);
    // Turns after the first come back through the shared queue. A slot kept for them (as turn affinity keeps it for
    // the server's own queue) would stand idle, and hold them back, for RETURNING_TURN_HOLD_MS (5 s) each.
    const { rows } = await stack.pool.query<{ turn: number; queue_ms: number }>(
      "SELECT turn, queue_ms FROM monitor_records WHERE trajectory_id LIKE 'no-affinity/%' AND turn > 0",
    );
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row.queue_ms, `turn ${row.turn} waited ${row.queue_ms} ms to start`).toBeLessThan(2_500);
  });
});

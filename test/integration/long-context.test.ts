import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { readTrajectories } from '../../src/store/read/trajectory-export.js';
import { expectSeedInvariants } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  // Answers far longer than the budget: every turn is cut off at 16K new tokens, as AReaL's long runs are.
  stack = await startTestStack({ reasoningTokens: 60_000, tokensPerSecond: 1e7, chunkTokens: 1024, incrementalStreamingOutput: true, seed: 3 });
  stopWorkers = await stack.startWorkers();
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

describe('a trajectory at AReaL scale (16K new tokens per turn, 5 turns)', () => {
  it('keeps bulk tokens out of workflow history while the context grows past 65K tokens', { timeout: 240_000 }, async () => {
    const [request] = trajectoryRequests('long', stack.problems.slice(0, 1), 1, { maxNewTokens: 16_384 });
    const { handle } = await submitTrajectory(stack.client, request!);
    const result = await handle.result();
    expect(result.turns.map((t) => t.outputLen)).toEqual(Array(5).fill(16_384));
    expect(result.turns.map((t) => t.finishReason)).toEqual(Array(5).fill('length'));
    const lastContext = result.turns[4]!.contextLen;
    expect(lastContext).toBeGreaterThan(4 * 16_384);

    const history = await handle.fetchHistory();
    const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
    // 330K packed tokens would be megabytes as JSON; the history holds counts and references only.
    expect(historyBytes).toBeLessThan(100_000);
    console.log(
      `long-context trajectory: final context ${lastContext + 16_384} tokens, history ${historyBytes} bytes, ${history.events?.length} events`,
    );

    const rows = [];
    for await (const row of readTrajectories(stack.pool)) rows.push(row);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.seq_no_eos_mask).toEqual(Array(5).fill(true));
    expectSeedInvariants(rows[0]!, stack.tokenizer);
  });
});

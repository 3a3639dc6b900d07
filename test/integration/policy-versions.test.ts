import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { latestPolicyVersion, publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { expectSeedInvariants, expectTokenVersions } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';

let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  // ~400-token answers at 200 tokens/s: a turn streams for about two seconds, long enough to publish mid-turn.
  stack = await startTestStack({ tokensPerSecond: 200, reasoningTokens: 400, seed: 9 });
  // Cancellation reaches an activity with its next heartbeat: beat often, so a cancel lands mid-turn.
  stopWorkers = await stack.startWorkers({ heartbeatIntervalMs: 250 });
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

const until = (condition: () => boolean, timeoutMs: number) =>
  pollUntil(condition, { what: String(condition), timeoutMs, intervalMs: 20, fatal: () => true });

describe('policy versions', () => {
  it('splits a turn across the versions it was generated under when a version is published mid-turn', async () => {
    const [request] = trajectoryRequests('bump', stack.problems.slice(0, 1), 1, { turns: 2 });
    const { handle } = await submitTrajectory(stack.client, request!);
    await until(() => stack.policy.stats().generatedTokens >= 60, 20_000);
    await publishPolicyVersion(stack.pool, 1, '/weights/step-1');
    const result = await handle.result();

    expect(result.turns[0]!.versionStart).toBe(0);
    expect(result.turns[0]!.versionEnd).toBe(1);
    expect(result.turns[1]!.versionStart).toBe(1);
    const [row] = await stack.exported('bump/');
    expectSeedInvariants(row!, stack.tokenizer);
    expectTokenVersions(row!);
    const firstOutput = row!.token_versions.slice(row!.prompt_lens[0]!, row!.seqlens[0]!);
    expect(firstOutput).toContain(0);
    expect(firstOutput).toContain(1);
    expect(stack.policy.stats().weightVersion).toBe(1);
  });

  it('refuses a version that does not move forward', async () => {
    await expect(publishPolicyVersion(stack.pool, 1)).rejects.toThrow(/not newer than the published version 1/);
    expect((await latestPolicyVersion(stack.pool))?.version).toBe(1);
  });

  it('exports rows that pass the seed and token-version checks across a run with a version bump', async () => {
    const running = runRollouts(stack.client, trajectoryRequests('run-bump', stack.problems.slice(1, 7), 1, { turns: 3 }));
    await until(() => stack.policy.stats().inFlight > 0, 20_000);
    await publishPolicyVersion(stack.pool, 2);
    const results = await running;
    expect(results.every((r) => r.status === 'completed')).toBe(true);
    const rows = await stack.exported('run-bump/');
    expect(rows).toHaveLength(6);
    for (const row of rows) {
      expectSeedInvariants(row, stack.tokenizer);
      expectTokenVersions(row);
    }
    expect(rows.some((row) => row.version_end.includes(2))).toBe(true);
  });
});

describe('cancellation', () => {
  it('aborts the request on the server when a trajectory is cancelled mid-generation, and records the failure', async () => {
    const [request] = trajectoryRequests('cancel', stack.problems.slice(7, 8), 1, { turns: 2 });
    const { handle } = await submitTrajectory(stack.client, request!);
    const streaming = () => stack.policy.stats().recent.find((r) => r.rid.startsWith('cancel/') && r.end === undefined && r.sentIds.length > 20);
    await until(() => streaming() !== undefined, 20_000);
    const rid = streaming()!.rid;
    const serverRequest = () => stack.policy.stats().recent.find((r) => r.rid === rid);
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    await until(() => serverRequest()?.end !== undefined, 10_000);
    expect(['abort', 'disconnect']).toContain(serverRequest()!.end);
    const { rows } = await stack.pool.query("SELECT status, error FROM trajectories WHERE trajectory_id LIKE 'cancel/%'");
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('failed');
    expect(rows[0].error).toMatch(/cancel/i);
  });
});

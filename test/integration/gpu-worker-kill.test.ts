import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { stopProcess } from '../../src/stack/child-process.js';
import { readTrajectories } from '../../src/store/read/trajectory-export.js';
import { expectSeedInvariants } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';

const CLI = path.resolve(import.meta.dirname, '../../dist/cli/main.js');
const TOKENS_PER_SECOND = 100;
const HEARTBEAT_MS = 500;

let stack: TestStack;
let stopCpuWorker: () => Promise<void>;
const children: ChildProcess[] = [];

/** A GPU worker in its own process (built CLI), so it can be SIGKILLed like a crashed host. */
function spawnGpuWorker(): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'worker', 'gpu'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      DATABASE_URL: stack.databaseUrl,
      RATCHET_POLICY_URL: stack.policy.url,
      RATCHET_HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

const until = (condition: () => boolean | Promise<boolean>, timeoutMs: number) =>
  pollUntil(condition, { what: String(condition), timeoutMs, intervalMs: 50, fatal: () => true });

beforeAll(async () => {
  // ~800-token answers at 100 tokens/s: every turn streams for several seconds, long enough to kill one mid-way.
  stack = await startTestStack({ tokensPerSecond: TOKENS_PER_SECOND, reasoningTokens: 800, seed: 5 });
  stopCpuWorker = await stack.startWorkers({ gpu: false });
});

afterAll(async () => {
  for (const child of children) await stopProcess(child, 2_000);
  await stopCpuWorker?.();
  await stack?.stop();
});

describe('a GPU worker killed mid-generation', () => {
  it('is replaced by a new worker that resumes the turn from its last heartbeat, with exactly one result row', { timeout: 120_000 }, async () => {
    const [request] = trajectoryRequests('kill', stack.problems.slice(0, 1), 1, { turns: 2 });
    const { handle } = await submitTrajectory(stack.client, { ...request!, timeouts: { generateHeartbeatSeconds: 3 } });

    const first = spawnGpuWorker();
    await until(() => stack.policy.stats().generatedTokens >= 300, 30_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const requestsBeforeRestart = stack.policy.stats().requests;

    spawnGpuWorker();
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.turns).toHaveLength(2);
    // The killed attempt's request was retried after the heartbeat timeout: more requests than turns.
    expect(requestsBeforeRestart).toBeGreaterThanOrEqual(1);
    expect(stack.policy.stats().requests).toBeGreaterThan(2);
    // Only the tokens after the last heartbeat were generated twice: at most one interval's worth (plus a chunk).
    const kept = result.turns.reduce((sum, turn) => sum + turn.outputLen, 0);
    // Each GPU worker's start-up logprob probe generates a token per request too: not turn tokens.
    const probed = stack.policy
      .stats()
      .recent.filter((r) => r.rid.startsWith('ratchet-logprob-probe/'))
      .reduce((sum, r) => sum + r.sentIds.length, 0);
    const generatedTwice = stack.policy.stats().generatedTokens - kept - probed;
    console.log(`kill mid-turn: server generated ${stack.policy.stats().generatedTokens} tokens for ${kept} kept; ${generatedTwice} generated twice`);
    expect(generatedTwice).toBeGreaterThanOrEqual(0);
    expect(generatedTwice).toBeLessThanOrEqual((TOKENS_PER_SECOND * HEARTBEAT_MS) / 1000 + 16);

    const history = await handle.fetchHistory();
    const generateAttempts = (history.events ?? [])
      .filter((event) => event.activityTaskStartedEventAttributes)
      .map((event) => event.activityTaskStartedEventAttributes!.attempt ?? 1);
    expect(Math.max(...generateAttempts)).toBeGreaterThanOrEqual(2);

    const rows = [];
    for await (const row of readTrajectories(stack.pool, { includeFailed: true })) if (row.trajectory_id.startsWith('kill/')) rows.push(row);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('completed');
    expectSeedInvariants(rows[0]!, stack.tokenizer);
  });
});

describe('a GPU worker stopped while it is starting', () => {
  it('stops instead of polling on: a stop before its Temporal worker runs is not lost', { timeout: 60_000 }, async () => {
    // Each stop lands at another point of the start (the health check, the worker's creation, its first poll).
    for (const delayMs of [0, 5, 20, 100]) {
      const stop = await stack.startWorkers({ cpu: false });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const stopped = await Promise.race([stop().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 15_000))]);
      expect(stopped, `stop ${delayMs} ms after the start`).toBe(true);
    }
  });
});

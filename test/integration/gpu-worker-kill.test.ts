import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitTrajectory, trajectoryRequests } from '../../src/rollout/submit.js';
import { stopProcess } from '../../src/stack/temporal-dev-server.js';
import { readTrajectories } from '../../src/store/trajectory-export.js';
import { expectSeedInvariants } from './seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';

const CLI = path.resolve(import.meta.dirname, '../../dist/cli/main.js');

let stack: TestStack;
let stopCpuWorker: () => Promise<void>;
const children: ChildProcess[] = [];

/** A GPU worker in its own process (built CLI), so it can be SIGKILLed like a crashed host. */
function spawnGpuWorker(): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'worker', 'gpu'], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl, RATCHET_POLICY_URL: stack.policy.url, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  // ~120-token answers at 40 tokens/s: every generation takes a few seconds, long enough to kill one mid-way.
  stack = await startTestStack({ tokensPerSecond: 40, reasoningTokens: 100, seed: 5 });
  stopCpuWorker = await stack.startWorkers({ gpu: false });
});

afterAll(async () => {
  for (const child of children) await stopProcess(child, 2_000);
  await stopCpuWorker?.();
  await stack?.stop();
});

describe('a GPU worker killed mid-generation', () => {
  it('is replaced by a new worker that finishes the trajectory, with exactly one result row', async () => {
    const [request] = trajectoryRequests('kill', stack.problems.slice(0, 1), 1, { turns: 2 });
    const { handle } = await submitTrajectory(stack.client, { ...request!, timeouts: { generateHeartbeatSeconds: 2 } });

    const first = spawnGpuWorker();
    await until(() => stack.policy.stats().inFlight > 0, 30_000);
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

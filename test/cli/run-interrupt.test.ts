import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/datasets/index.js';
import { trajectoryId } from '../../src/client/submit.js';
import { startScratchStack, type ScratchStack } from '../../src/stack/scratch-stack.js';
import { SAMPLE } from '../../src/stack/simulated-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { CLI } from './run-cli.js';

// Issue 36: with the Temporal SDK's signal hooks installed, `ratchet run --submit-only` swallowed the first
// SIGINT or SIGTERM and waited on for ever (no worker ran its trajectories): a `timeout` around it never ended it.
let stack: ScratchStack;
beforeAll(async () => {
  stack = await startScratchStack({ prefix: 'ratchet-interrupt-' });
});
afterAll(async () => {
  await stack?.stop();
});

describe('ratchet run --submit-only, interrupted', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('ends on the first %s with status %i, its trajectories still submitted', async (signal, status) => {
    const runName = `interrupt-${signal.toLowerCase()}-${Date.now()}`;
    const child = spawn(process.execPath, [CLI, 'run', '--submit-only', '--dataset', SAMPLE, '--limit', '2', '--run-name', runName], {
      env: { ...process.env, LOG_LEVEL: undefined, TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      const { problems } = await loadDataset(SAMPLE);
      const ids = problems.slice(0, 2).map((problem) => trajectoryId(runName, problem.qid, 0));
      // Submitted, and waiting on results no worker will produce.
      await pollUntil(
        async () => {
          const described = await Promise.all(
            ids.map((id) =>
              stack.client.workflow
                .getHandle(id)
                .describe()
                .then(
                  (d) => d.status.name,
                  () => undefined,
                ),
            ),
          );
          return described.every((name) => name === 'RUNNING');
        },
        { what: 'both trajectories to be submitted', timeoutMs: 60_000, intervalMs: 200 },
      );
      const sent = performance.now();
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const [code] = await exited;
      clearTimeout(timer);
      const ms = performance.now() - sent;
      process.stderr.write(`ratchet run --submit-only exited ${Math.round(ms)} ms after ${signal}\n`);
      expect({ code, stderr }).toMatchObject({ code: status, stderr: expect.stringContaining(`interrupted by ${signal}`) });
      expect(stderr).toContain(`--run-name ${runName}`);
      expect(ms).toBeLessThan(5_000);
      for (const id of ids) expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
      for (const id of ids) await stack.client.workflow.getHandle(id).terminate('test over');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PYTHON_EXAMPLE_DIR, pythonExampleEnv } from '../../src/stack/python-example-env.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;
let python: string;

beforeAll(async () => {
  python = await pythonExampleEnv(loadConfig().stateDir);
  stack = await startTestStack({ seed: 21 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController();
}, 600_000);

afterAll(async () => {
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

describe('the Python trainer example', () => {
  it('starts trajectory workflows from Python, consumes Arrow batches zero-copy, publishes versions and acknowledges', async () => {
    const { stdout } = await promisify(execFile)(python, [path.join(PYTHON_EXAMPLE_DIR, 'trainer.py'), '--run', 'py', '--prompts', '6', '--samples', '2', '--batch-size', '2', '--steps', '3'], {
      env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl, RATCHET_CLI: `${process.execPath} ${path.resolve('dist/cli/main.js')}`, LOG_LEVEL: 'error' },
      timeout: 300_000,
    });
    const events = stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(events[0]).toEqual({ event: 'submitted', groups: 6, trajectories: 12 });
    const steps = events.filter((e) => e.event === 'step');
    expect(steps.map((s) => s.policyVersion)).toEqual([1, 2, 3]);
    for (const step of steps) {
      expect(step.groups).toBe(2);
      expect(step.rows).toBe(4);
      expect(step.generated_tokens).toBeGreaterThan(0);
      expect(step.tokens).toBeGreaterThan(step.generated_tokens);
    }
    expect(events.at(-1)).toEqual({ event: 'done', steps: 3, groups: 6, policyVersion: 3 });

    // What Python started is what Ratchet ran: the requests parsed, the groups were admitted and consumed once.
    const { rows } = await stack.pool.query(`SELECT count(*) FILTER (WHERE consumed_at IS NOT NULL) AS consumed, count(*) AS groups FROM rollout_groups WHERE run_id = 'py'`);
    expect(rows[0]).toEqual({ consumed: '6', groups: '6' });
    const { rows: batches } = await stack.pool.query(`SELECT count(*) AS acked FROM rollout_batches WHERE run_id = 'py' AND acked_at IS NOT NULL`);
    expect(batches[0].acked).toBe('3');
    expect((await stack.exported('py/')).length).toBe(12);
  });
});

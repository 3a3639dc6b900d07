import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { localTemporalCliPath } from '../../src/stack/temporal-cli.js';
import { CPU_TASK_QUEUE } from '../../src/task-queues.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  stack = await startTestStack({ seed: 13 });
  stopWorkers = await stack.startWorkers();
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

const valid = { qid: 'q', problem: 'What is 1+1?', gold: ['2'] };

/** Starts the workflow around every client-side check, as a Python trainer or `temporal workflow start` could. */
async function failureOf(workflowId: string, args: unknown[]): Promise<{ failure: ApplicationFailure; elapsedMs: number }> {
  const started = Date.now();
  const handle = await stack.client.workflow.start('trajectory', { taskQueue: CPU_TASK_QUEUE, workflowId, args });
  const error = await handle.result().then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return { failure: (error as WorkflowFailedError).cause as ApplicationFailure, elapsedMs: Date.now() - started };
}

describe('a request that breaks the schema', () => {
  it.each([
    ['a non-numeric timeout', 'poison/timeout/0', [{ trajectoryId: 'poison/timeout/0', ...valid, timeouts: { generateHeartbeatSeconds: 'soon' } }], 'timeouts.generateHeartbeatSeconds'],
    ['a missing problem', 'poison/problem/0', [{ trajectoryId: 'poison/problem/0', qid: 'q', gold: ['2'] }], 'problem'],
    ['a non-string qid', 'poison/qid/0', [{ trajectoryId: 'poison/qid/0', ...valid, qid: 7 }], 'qid'],
    ['a NUL byte in the problem', 'poison/nul/0', [{ trajectoryId: 'poison/nul/0', ...valid, problem: 'What is\u0000 1+1?' }], 'problem'],
    ['a trajectory id that is not the workflow id', 'poison/id/0', [{ trajectoryId: 'elsewhere', ...valid }], 'trajectoryId'],
    ['no input at all', 'poison/none/0', [], ''],
  ])('fails once, typed, with %s, and leaves a failed row', async (_case, workflowId, args, path) => {
    const { failure, elapsedMs } = await failureOf(workflowId, args);
    expect(elapsedMs).toBeLessThan(60_000);
    expect(failure.type).toBe('TrajectoryFailed');
    expect(failure.details?.[0]).toMatchObject({ failureType: 'InvalidRequest', failureClass: 'data', turns: [] });
    expect(failure.message).toContain(path);

    const [row] = await stack.exported(workflowId, { includeFailed: true });
    expect(row).toMatchObject({ trajectory_id: workflowId, status: 'failed', failure_type: 'InvalidRequest', failure_class: 'data' });
  });

  it('shows with its failure type in `ratchet export --include-failed`', async () => {
    await failureOf('poison/export/0', [{ trajectoryId: 'poison/export/0', ...valid, options: { turns: 'five' } }]);
    const { stdout } = await promisify(execFile)(process.execPath, [path.resolve('dist/cli/main.js'), 'export', '--include-failed'], {
      env: { ...process.env, DATABASE_URL: stack.databaseUrl }, maxBuffer: 64 << 20,
    });
    const row = stdout.trim().split('\n').map((line) => JSON.parse(line)).find((r) => r.trajectory_id === 'poison/export/0');
    expect(row).toMatchObject({ status: 'failed', failure_type: 'InvalidRequest', failure_class: 'data' });
    expect(row.error).toContain('options.turns');
  });

  it('is rejected by `temporal workflow start` input too, without a worker crash loop', async () => {
    const id = 'poison/cli/0';
    await promisify(execFile)(localTemporalCliPath(path.resolve('.ratchet')), ['workflow', 'start', '--address', stack.temporalAddress,
      '--type', 'trajectory', '--task-queue', CPU_TASK_QUEUE, '--workflow-id', id,
      '--input', JSON.stringify({ trajectoryId: id, ...valid, timeouts: { generateStartToCloseSeconds: 'never' } })]);
    const error = await stack.client.workflow.getHandle(id).result().then(() => undefined, (e: unknown) => e);
    expect(((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0]).toMatchObject({ failureType: 'InvalidRequest' });
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    // Failed as a workflow in one task, not a workflow task failing and retrying.
    expect(history.events?.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  });
});

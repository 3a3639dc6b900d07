import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { localTemporalCliPath } from '../../src/stack/temporal-cli.js';
import { CPU_TASK_QUEUE } from '../../src/task-queues.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';

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
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return { failure: (error as WorkflowFailedError).cause as ApplicationFailure, elapsedMs: Date.now() - started };
}

describe('a request that breaks the schema', () => {
  it.each([
    [
      'a non-numeric timeout',
      'poison/timeout/0',
      [{ trajectoryId: 'poison/timeout/0', ...valid, timeouts: { generateHeartbeatSeconds: 'soon' } }],
      'timeouts.generateHeartbeatSeconds',
    ],
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
      env: { ...process.env, DATABASE_URL: stack.databaseUrl },
      maxBuffer: 64 << 20,
    });
    const row = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((r) => r.trajectory_id === 'poison/export/0');
    expect(row).toMatchObject({ status: 'failed', failure_type: 'InvalidRequest', failure_class: 'data' });
    expect(row.error).toContain('options.turns');
  });

  it('is rejected by `temporal workflow start` input too, without a worker crash loop', async () => {
    const id = 'poison/cli/0';
    await promisify(execFile)(localTemporalCliPath(path.resolve('.ratchet')), [
      'workflow',
      'start',
      '--address',
      stack.temporalAddress,
      '--type',
      'trajectory',
      '--task-queue',
      CPU_TASK_QUEUE,
      '--workflow-id',
      id,
      '--input',
      JSON.stringify({ trajectoryId: id, ...valid, timeouts: { generateStartToCloseSeconds: 'never' } }),
    ]);
    const error = await stack.client.workflow
      .getHandle(id)
      .result()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(((error as WorkflowFailedError).cause as ApplicationFailure).details?.[0]).toMatchObject({ failureType: 'InvalidRequest' });
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    // Failed as a workflow in one task, not a workflow task failing and retrying.
    expect(history.events?.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  });
});

describe('a group member whose request is invalid', () => {
  it('still takes its place in its group, so its siblings are admitted and the group finishes', { timeout: 120_000 }, async () => {
    const stopController = await stack.startController();
    try {
      const run = { runId: 'poisoned', maxHeadOffpolicyness: 8, batchSize: 1, maxConcurrent: 4 };
      const [problem] = stack.problems;
      const member = (groupId: string, sample: number, options: unknown) => ({
        trajectoryId: `${groupId}/${sample}`,
        qid: problem!.qid,
        problem: problem!.problem,
        gold: problem!.gold,
        options,
        group: { run, groupId, size: 3, sample },
      });
      const start = (request: { trajectoryId: string }) =>
        stack.client.workflow.start('trajectory', { taskQueue: CPU_TASK_QUEUE, workflowId: request.trajectoryId, args: [request] });
      const status = async (id: string) =>
        (
          await stack.pool.query<{ status: string; failure_type: string | null }>(
            'SELECT status, failure_type FROM trajectories WHERE trajectory_id = $1',
            [id],
          )
        ).rows[0];
      const group = async (groupId: string) =>
        (
          await stack.pool.query<{ joined: number; finished: number; completed: number; status: string }>(
            'SELECT joined, finished, completed, status FROM rollout_groups WHERE group_id = $1',
            [groupId],
          )
        ).rows[0];

      // The bad member arrives between its siblings in one group, and first of all in another (it then makes the group).
      for (const [groupId, order] of [
        ['poisoned/between', [0, 1, 2]],
        ['poisoned/first', [1, 0, 2]],
      ] as const) {
        const requests = [member(groupId, 0, { turns: 1 }), member(groupId, 1, { turns: 0 }), member(groupId, 2, { turns: 1 })];
        for (const sample of order) {
          const handle = await start(requests[sample]!);
          if (sample === 1) expect(await causeOf(handle.result())).toMatch(/options\.turns/);
        }
        for (const sample of [0, 2]) await until(async () => (await status(`${groupId}/${sample}`))?.status === 'completed', 90_000);
        expect(await status(`${groupId}/1`)).toEqual({ status: 'failed', failure_type: 'InvalidRequest' });
        expect(await group(groupId)).toEqual({ joined: 3, finished: 3, completed: 2, status: 'admitted' });
      }

      // A bad member whose group section names another sample's id takes no place: it cannot overfill a group.
      const stray = { ...member('poisoned/between', 1, { turns: 0 }), trajectoryId: 'poisoned/between/7' };
      expect(await causeOf((await start(stray)).result())).toMatch(/options\.turns/);
      expect(await group('poisoned/between')).toEqual({ joined: 3, finished: 3, completed: 2, status: 'admitted' });
    } finally {
      await stopController();
    }
  });
});

/** The message of the failure a workflow ended with. */
async function causeOf(result: Promise<unknown>): Promise<string> {
  const error = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  return (error as WorkflowFailedError).cause?.message ?? '';
}

function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return pollUntil(condition, { what: String(condition), timeoutMs, fatal: () => true });
}

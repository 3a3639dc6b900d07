import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { submitTrajectory, trajectoryRequest, trajectoryRequests } from '../../src/client/submit.js';
import { InvalidTrajectoryRequest, type TrajectoryRequest } from '../../src/trajectory/request.js';

// Nothing listens on port 1: a request that got as far as the network would fail with a connection error,
// never with InvalidTrajectoryRequest. The lazy connection and pool only dial when first used.
const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: '1s' });
const temporal = new Client({ connection });
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 1000 });
afterAll(async () => {
  await Promise.all([connection.close(), pool.end()]);
});

const valid: TrajectoryRequest = { trajectoryId: 'run/q/0', qid: 'q', problem: 'How many?', gold: ['2'] };

describe('submitTrajectory', () => {
  it('rejects an invalid request before calling Temporal', async () => {
    const start = vi.spyOn(temporal.workflow, 'start');
    const bad = { ...valid, timeouts: { generateHeartbeatSeconds: 'soon' } } as unknown as TrajectoryRequest;
    const error = await submitTrajectory(temporal, bad).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidTrajectoryRequest);
    expect((error as InvalidTrajectoryRequest).problems).toEqual(['timeouts.generateHeartbeatSeconds: expected number, got string']);
    expect(start).not.toHaveBeenCalled();
    start.mockRestore();
  });

  it('passes a valid request on to Temporal (here: unreachable, so a connection error)', async () => {
    const start = vi.spyOn(temporal.workflow, 'start');
    const error = await temporal.withDeadline(Date.now() + 500, () => submitTrajectory(temporal, valid)).catch((caught: unknown) => caught);
    expect(start).toHaveBeenCalledOnce();
    expect(error).not.toBeInstanceOf(InvalidTrajectoryRequest);
    start.mockRestore();
  });
});

describe('trajectoryRequests', () => {
  it('throws InvalidTrajectoryRequest for bad options while building, before anything is submitted', () => {
    const problems = [{ qid: 'q', problem: 'p', gold: ['1'], source: 'math' as const }];
    expect(() => trajectoryRequests('run', problems, 2, { turns: 0 })).toThrow(InvalidTrajectoryRequest);
    expect(trajectoryRequests('run', problems, 2, { turns: 2 }).map((r) => r.trajectoryId)).toEqual(['run/q/0', 'run/q/1']);
  });
});

describe('RolloutClient.submit', () => {
  it('validates every request before creating the run or starting any workflow', async () => {
    const client = RolloutClient.fromConnections(temporal, pool, 'postgres://unused');
    const start = vi.spyOn(temporal.workflow, 'start');
    const query = vi.spyOn(pool, 'query');
    const run = { runId: 'grpo', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
    const problems = [
      { qid: 'fine', problem: 'p', gold: ['1'], source: 'math' as const },
      { qid: 'poison', problem: 'p\u0000', gold: ['1'], source: 'math' as const },
    ];
    await expect(client.submit(run, problems, { samples: 2 })).rejects.toThrow(
      'invalid trajectory request grpo/poison/0: problem: must not contain NUL (U+0000), which Postgres text cannot store',
    );
    expect(query).not.toHaveBeenCalled();
    expect(start).not.toHaveBeenCalled();
  });
});

describe('trajectoryRequest', () => {
  it('builds a grouped sample and a plain one alike, leaving out what the placement does not give', () => {
    const problem = { qid: 'q', taskId: 7, problem: 'p', gold: ['1'], source: 'math' as const };
    const group = { run: { runId: 'grpo', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 }, groupId: 'grpo/q', size: 2, sample: 1 };
    expect(trajectoryRequest(problem, { trajectoryId: 'grpo/q/1', group })).toEqual({
      trajectoryId: 'grpo/q/1',
      qid: 'q',
      taskId: 7,
      problem: 'p',
      gold: ['1'],
      group,
    });
    expect(trajectoryRequest(problem, { trajectoryId: 'run/q/0', options: { turns: 2 } })).toEqual({
      trajectoryId: 'run/q/0',
      qid: 'q',
      taskId: 7,
      problem: 'p',
      gold: ['1'],
      options: { turns: 2 },
    });
  });
});

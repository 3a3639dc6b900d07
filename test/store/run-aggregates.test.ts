import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStatus } from '../../src/store/read/run-status.js';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { acknowledgeBatch, claimBatch } from '../../src/store/write/batches.js';
import { admitGroups, cancelGroups } from '../../src/store/write/rollout-groups.js';
import { readOneRunAggregates, recordSubmissions } from '../../src/store/read/run-aggregates.js';
import { listRuns, runCounters } from '../../src/store/read/run-views.js';
import { storeFailedTrajectory } from '../../src/store/write/trajectory-store.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';
import { complete, fail, joinedGroup, start } from './run-rows.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

/** The counts scanned from the rows themselves: what the aggregates must always equal. */
async function recount(runId: string) {
  const {
    rows: [row],
  } = await db.pool.query(
    `SELECT (SELECT count(*) FROM trajectories WHERE run_id = $1 AND status = 'completed')::int AS completed,
            (SELECT count(*) FROM trajectories WHERE run_id = $1 AND status = 'failed')::int AS failed,
            (SELECT count(*) FROM trajectory_prompts WHERE run_id = $1)::int AS running,
            (SELECT coalesce(sum(output_tokens), 0) FROM trajectories WHERE run_id = $1)::int AS tokens,
            (SELECT count(*) FROM monitor_records WHERE run_id = $1)::int AS turns,
            (SELECT count(*) FROM run_submissions WHERE run_id = $1)::int AS submissions`,
    [runId],
  );
  return row;
}

async function aggregated(runId: string) {
  const run = await readOneRunAggregates(db.pool, runId);
  const {
    rows: [turns],
  } = await db.pool.query('SELECT coalesce(sum(turns), 0)::int AS n FROM run_turn_counts WHERE run_id = $1', [runId]);
  return {
    completed: run.completedTrajectories,
    failed: run.failedTrajectories,
    running: run.runningTrajectories,
    tokens: run.outputTokens,
    turns: turns.n,
    submissions: run.recordedSubmissions,
  };
}

const trainingRun = (runId: string, maxHeadOffpolicyness = 4): RunConfig => ({ runId, maxHeadOffpolicyness, batchSize: 1, maxConcurrent: 8 });

describe("a run's aggregates", () => {
  it('count each stored trajectory once, however often its persist runs', async () => {
    await complete(db.pool, 'once/a/0', ['wrong', 'correct']);
    await complete(db.pool, 'once/a/1', ['runtime_error']);
    await fail(db.pool, 'once/b/0', 'VerifierError', 'data');
    // A persist re-run after the row was stored: the activity answers as before, the store writes nothing.
    await complete(db.pool, 'once/a/0', ['wrong', 'correct']).catch(() => undefined);
    await fail(db.pool, 'once/b/0', 'VerifierError', 'data');
    expect(
      await storeFailedTrajectory(
        db.pool,
        { trajectoryId: 'once/b/0', qid: 'b', birthTime: 1, layout: 'seed' },
        { message: 'again', failureType: 'VerifierError', failureClass: 'data', turnsDone: 0 },
        [],
      ),
    ).toBe(false);
    await db.pool.query(
      `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time) VALUES ('once/a/1', 'a', 'failed', 'seed', 0, 1) ON CONFLICT DO NOTHING`,
    );

    expect(await aggregated('once')).toEqual(await recount('once'));
    expect(await aggregated('once')).toMatchObject({ completed: 2, failed: 1, running: 0, tokens: 9, turns: 3 });
    const counters = await runCounters(db.pool, 'once');
    expect(counters).toMatchObject({ submitted: 3, queued: 0, running: 0, completed: 2, failed: 1, failedByType: { VerifierError: 1 } });
    const { rows } = await db.pool.query(
      'SELECT verdict, sum(turns)::int AS turns, sum(successes)::int AS successes FROM run_turn_counts WHERE run_id = $1 GROUP BY 1 ORDER BY 1',
      ['once'],
    );
    expect(rows).toEqual([
      { verdict: 'correct', turns: 1, successes: 1 },
      { verdict: 'runtime_error', turns: 1, successes: 0 },
      { verdict: 'wrong', turns: 1, successes: 0 },
    ]);
  });

  it('stay exact under concurrent writers of one run: persists, re-runs, starts and submissions at once', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `busy/q${i}/0`);
    await Promise.all([
      // The first ten race a failure against their own run: one of the two stores the row, the other finds it stored.
      ...ids.map((id, i) =>
        (i % 4 === 3 ? fail(db.pool, id) : i % 4 === 2 ? start(db.pool, id) : complete(db.pool, id, ['wrong', 'correct'])).catch(() => undefined),
      ),
      ...ids.slice(0, 10).map((id) => fail(db.pool, id).catch(() => undefined)),
      recordSubmissions(db.pool, ids),
      recordSubmissions(db.pool, ids.slice(20)),
    ]);
    expect(await aggregated('busy')).toEqual(await recount('busy'));
    const counters = await runCounters(db.pool, 'busy');
    expect(counters).toMatchObject({ submitted: 40, queued: 0 });
    expect(counters.running + counters.completed + counters.failed).toBe(40);
  });

  it("count a plain run's backlog from what the client recorded, once, before any worker starts it", async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `backlog/q${i}/0`);
    await recordSubmissions(db.pool, ids);
    await recordSubmissions(db.pool, ids.slice(0, 4)); // resubmitting the run changes nothing
    expect(await runCounters(db.pool, 'backlog')).toMatchObject({ submitted: 10, queued: 10, running: 0, completed: 0, failed: 0 });
    await start(db.pool, ids[0]!);
    await start(db.pool, ids[1]!);
    await start(db.pool, ids[1]!); // a retried tokenize step
    await complete(db.pool, ids[2]!);
    await fail(db.pool, ids[3]!);
    expect(await runCounters(db.pool, 'backlog')).toMatchObject({ submitted: 10, queued: 6, running: 2, completed: 1, failed: 1 });
    expect(await aggregated('backlog')).toEqual(await recount('backlog'));
    expect((await listRuns(db.pool)).find((run) => run.runId === 'backlog')).toMatchObject({ kind: 'plain', counters: { submitted: 10, queued: 6 } });
  });

  it('count a run submitted by a client that recorded nothing by its rows', async () => {
    await start(db.pool, 'unrecorded/a/0');
    await complete(db.pool, 'unrecorded/a/1');
    expect(await runCounters(db.pool, 'unrecorded')).toMatchObject({ submitted: 2, queued: 0, running: 1, completed: 1 });
  });

  it('count consumed and stale trajectories at acknowledgement, the same in runs status and the run page', async () => {
    const run = trainingRun('consumed', 0);
    await recordSubmissions(db.pool, ['consumed/a/0', 'consumed/a/1', 'consumed/b/0', 'consumed/b/1']);
    const [a0, a1] = await joinedGroup(db.pool, run, 'a', 2);
    await joinedGroup(db.pool, run, 'b', 2);
    expect((await runStatus(db.pool, run.runId))!).toMatchObject({ waiting: 2, trajectories: { submitted: 4, queued: 4 } });
    await admitGroups(db.pool, run.runId);
    await complete(db.pool, a0!, ['correct'], 0);
    await complete(db.pool, a1!, ['wrong'], 0);
    await publishPolicyVersion(db.pool, 1 + (await db.pool.query('SELECT coalesce(max(version), 0) AS v FROM policy_versions')).rows[0].v);
    const batch = (await claimBatch(db.pool, { runId: run.runId, batchSize: 1, consumer: 'test', leaseMs: 60_000 }))!;
    expect(batch.staleTrajectories).toBe(2);
    // Claimed, not acknowledged: nothing is consumed or stale yet, in either view.
    expect(await runCounters(db.pool, run.runId)).toMatchObject({ consumedGroups: 0, consumedTrajectories: 0, staleTrajectories: 0 });
    expect((await runStatus(db.pool, run.runId))!).toMatchObject({ consumed: 0, consumedTrajectories: 0, staleTrajectories: 0, unconsumed: 1 });
    await acknowledgeBatch(db.pool, batch.batchId);
    await acknowledgeBatch(db.pool, batch.batchId); // twice is harmless, and counts once
    expect(await runCounters(db.pool, run.runId)).toMatchObject({ consumedGroups: 1, consumedTrajectories: 2, staleTrajectories: 2 });
    expect((await runStatus(db.pool, run.runId))!).toMatchObject({
      consumed: 1,
      consumedTrajectories: 2,
      staleTrajectories: 2,
      unconsumed: 0,
      accepted: 1,
    });
  });

  it('count a cancelled group as cancelled, waiting or running, and never hand it out', async () => {
    const run = trainingRun('cancelled');
    const [a0, a1] = await joinedGroup(db.pool, run, 'a', 2);
    await joinedGroup(db.pool, run, 'b', 2);
    await db.pool.query(`UPDATE rollout_runs SET max_concurrent = 1 WHERE run_id = 'cancelled'`);
    await admitGroups(db.pool, run.runId);
    await complete(db.pool, a0!);
    expect((await runStatus(db.pool, run.runId))!).toMatchObject({ waiting: 1, running: 1, cancelled: 0 });
    const unfinished = await cancelGroups(db.pool, { runId: run.runId });
    expect(unfinished).toEqual([a1, 'cancelled/b/0', 'cancelled/b/1']);
    // Its members end as the cancelled workflows record them.
    await fail(db.pool, a1!, 'Cancelled', 'infrastructure');
    const { rows } = await db.pool.query(`SELECT group_id, status FROM rollout_groups WHERE run_id = 'cancelled' ORDER BY 1`);
    expect(rows).toEqual([
      { group_id: 'cancelled/a', status: 'cancelled' },
      { group_id: 'cancelled/b', status: 'cancelled' },
    ]);
    expect((await runStatus(db.pool, run.runId))!).toMatchObject({ waiting: 0, running: 0, accepted: 0, rejected: 0, cancelled: 2, unconsumed: 0 });
    expect(await claimBatch(db.pool, { runId: run.runId, batchSize: 1, consumer: 'test', leaseMs: 60_000, partial: true })).toBeUndefined();
  });

  it("give the current throughput over the last minute beside the run's average", async () => {
    await complete(db.pool, 'throughput/a/0', ['correct', 'correct']);
    await complete(db.pool, 'throughput/a/1', ['correct']);
    const counters = await runCounters(db.pool, 'throughput');
    // Two trajectories, nine output tokens, stored within a window of 50 to 60 seconds.
    expect(counters.recentTrajectoriesPerSecond).toBeGreaterThanOrEqual(2 / 60);
    expect(counters.recentTrajectoriesPerSecond).toBeLessThanOrEqual(2 / 50);
    expect(counters.recentTokensPerSecond).toBeCloseTo((counters.recentTrajectoriesPerSecond * 9) / 2, 6);
    // A run whose trajectories were stored long ago has a run average and no current throughput.
    await db.pool.query(`INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, output_tokens, finished_at)
      VALUES ('old/a/0', 'a', 'completed', 'seed', 1, extract(epoch FROM now() - interval '2 hours') * 1000, 100, now() - interval '1 hour')`);
    expect(await runCounters(db.pool, 'old')).toMatchObject({ recentTrajectoriesPerSecond: 0, recentTokensPerSecond: 0 });
    expect((await runCounters(db.pool, 'old')).tokensPerSecond).toBeCloseTo(100 / 3600, 6);
  });

  it('list runs in one query, the most recently active first, however many there are', async () => {
    const runs = await listRuns(db.pool, 3);
    expect(runs).toHaveLength(3);
    const all = await listRuns(db.pool);
    expect(all.map((run) => run.runId)).toEqual(
      expect.arrayContaining(['once', 'backlog', 'unrecorded', 'consumed', 'cancelled', 'throughput', 'old']),
    );
    expect(all.at(-1)!.runId).toBe('old');
    for (const run of all)
      expect(run.counters).toEqual(
        await runCounters(db.pool, run.runId).then((c) => ({
          ...c,
          recentTrajectoriesPerSecond: run.counters.recentTrajectoriesPerSecond,
          recentTokensPerSecond: run.counters.recentTokensPerSecond,
        })),
      );
  });
});

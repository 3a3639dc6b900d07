import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredTurn } from '../../src/store/write/turn-store.js';
import { storeFailedTrajectory } from '../../src/store/write/trajectory-store.js';
import { listTrajectories, type TrajectoryFilter, type TrajectoryOrder } from '../../src/store/read/trajectory-search.js';
import { runProblems } from '../../src/store/read/run-problems.js';
import type { VersionRewards } from '../../src/store/read/version-rewards.js';
import { problemsPage } from '../../src/ui/pages/problems-page.js';
import { wilsonInterval } from '../../src/ui/wilson.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { seedTrajectoryList } from '../store/trajectory-list-run.js';

// The stale and failed-with-a-verdict filters read migration 017's tables (kept by triggers) instead of probing every
// row of the run: the lists and totals must be exactly what the rows say, through hand-outs that flag and unflag.
let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrajectoryList(db.pool);
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

const newest: TrajectoryOrder = { sort: 'finished', direction: 'desc' };
const ids = async (filter: TrajectoryFilter, order: TrajectoryOrder = newest, after?: string, pageSize?: number) => {
  const page = await listTrajectories(db.pool, filter, order, after, pageSize);
  return { ids: page.entries.map((e) => e.trajectoryId), total: page.total, next: page.next };
};

describe('the stale filter (migration 017)', () => {
  it("lists the members flagged stale at their latest hand-out, in every order, with the run's stale count as its total", async () => {
    const { rows } = await db.pool.query('SELECT trajectory_id, run_id FROM run_stale_trajectories ORDER BY 1');
    expect(rows).toEqual([{ trajectory_id: 'train/q1/2', run_id: 'train' }]);
    expect(await ids({ runId: 'train', stale: true })).toMatchObject({ ids: ['train/q1/2'], next: null });
    expect(await ids({ runId: 'train', stale: true }, { sort: 'reward', direction: 'asc' })).toMatchObject({ ids: ['train/q1/2'] });
    expect(await ids({ runId: 'train', stale: true, verdict: 'correct' })).toMatchObject({ ids: [], total: { count: 0, exact: true } });
    expect(await ids({ runId: 'math', stale: true })).toMatchObject({ ids: [], total: { count: 0, exact: true } });
  });

  it('follows a re-hand-out that flags other members and clears one, and pages through them by finish time', async () => {
    await db.pool.query(
      `UPDATE rollout_members SET staleness = CASE WHEN sample = 2 THEN 0 ELSE 3 END, stale = sample <> 2 WHERE group_id = 'train/q1'`,
    );
    const { rows } = await db.pool.query('SELECT trajectory_id FROM run_stale_trajectories ORDER BY 1');
    expect(rows.map((row) => row.trajectory_id)).toEqual(['train/q1/0', 'train/q1/1', 'train/q1/3']);
    const first = await ids({ runId: 'train', stale: true }, newest, undefined, 2);
    expect(first).toMatchObject({ ids: ['train/q1/3', 'train/q1/1'], total: { count: 3, exact: true } });
    expect(await ids({ runId: 'train', stale: true }, newest, first.next!, 2)).toMatchObject({ ids: ['train/q1/0'], next: null });
    expect(await ids({ runId: 'train', stale: true }, { sort: 'finished', direction: 'asc' })).toMatchObject({
      ids: ['train/q1/0', 'train/q1/1', 'train/q1/3'],
    });
    expect(await ids({ runId: 'train', stale: true, verdict: 'wrong' })).toMatchObject({ ids: ['train/q1/1'], total: { count: 1, exact: true } });
  });
});

const turn = (n: number, verdict: string): StoredTurn => ({
  turn: n,
  contextLen: 1,
  outputIds: [1],
  outputLogprobs: [0],
  outputVersions: [0],
  feedbackIds: [],
  answerText: 'a',
  extractedAnswer: '1',
  verdict,
  feedbackText: null,
});

describe('failed trajectories with a verdict (migration 017)', () => {
  it('finds a failed trajectory by the verdict of a turn it finished, and nothing for a verdict none of its turns had', async () => {
    expect(await ids({ runId: 'math', status: 'failed', verdict: 'timeout' })).toMatchObject({
      ids: ['math/geometry/1/0'],
      total: { count: 1, exact: true },
    });
    expect(await ids({ runId: 'math', status: 'failed', verdict: 'wrong' })).toMatchObject({ ids: [], total: { count: 0, exact: true } });
    expect(await ids({ runId: 'math', status: 'failed', verdict: 'timeout' }, { sort: 'turns', direction: 'desc' })).toMatchObject({
      ids: ['math/geometry/1/0'],
    });
  });

  it('keeps the verdicts of a failed trajectory stored through the store, and none of a completed one', async () => {
    await storeFailedTrajectory(
      db.pool,
      { trajectoryId: 'math/algebra/7/0', qid: 'algebra/7', layout: 'seed', birthTime: 0 },
      { message: 'gone', failureType: 'InferenceUnavailable', failureClass: 'infrastructure', turnsDone: 2 },
      [turn(0, 'wrong'), turn(1, 'wrong')],
    );
    const { rows } = await db.pool.query(`SELECT trajectory_id, verdict FROM failed_turn_verdicts WHERE run_id = 'math' ORDER BY 1, 2`);
    expect(rows).toEqual([
      { trajectory_id: 'math/algebra/7/0', verdict: 'wrong' },
      { trajectory_id: 'math/geometry/1/0', verdict: 'timeout' },
    ]);
    expect(await ids({ runId: 'math', status: 'failed', verdict: 'wrong' })).toMatchObject({
      ids: ['math/algebra/7/0'],
      total: { count: 1, exact: true },
    });
    expect(await ids({ runId: 'math', status: 'failed', verdict: 'wrong', qid: 'algebra/3' })).toMatchObject({ ids: [] });
  });
});

describe('✓ then ✗ (a correct turn, then a later turn not correct)', () => {
  it('lists the trajectories that regressed, and none that were corrected or never right', async () => {
    await db.pool.query(
      `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, rewards, raw_rewards, successes, output_tokens, finished_at)
       VALUES ('math/algebra/5/0', 'algebra/5', 'completed', 'seed', 3, 0, '{-1,-2,-1}', '{1,-1,-1}', '{t,f,f}', 30, timestamptz '2026-01-01 00:01:30+00'),
              ('math/algebra/5/1', 'algebra/5', 'completed', 'seed', 3, 0, '{1,2,1}', '{-1,1,1}', '{f,t,t}', 30, timestamptz '2026-01-01 00:01:31+00')`,
    );
    const { rows } = await db.pool
      .query(`SELECT ratchet_correct_then_wrong(s) AS r FROM unnest(ARRAY['{t,f}', '{f,t}', '{t,t}', '{f,f}', '{t}', '{}', NULL]::text[]) u(x),
      LATERAL (SELECT x::boolean[] AS s) b`);
    expect(rows.map((row) => row.r)).toEqual([true, false, false, false, false, false, false]);
    expect(await ids({ runId: 'math', correctThenWrong: true })).toMatchObject({ ids: ['math/algebra/5/0'], total: { count: 1, exact: true } });
    expect(await ids({ runId: 'math', correctThenWrong: true, qid: 'algebra/3' })).toMatchObject({ ids: [], total: { count: 0, exact: true } });
  });
});

describe('pass at turn 1 beside pass at any turn', () => {
  it('counts per problem the samples whose first turn was correct, kept as trajectories are stored', async () => {
    const { problems } = await runProblems(db.pool, 'math', 'qid', 'asc');
    const rates = Object.fromEntries(problems.map((p) => [p.qid, [p.firstSolved, p.solved, p.samples]]));
    // algebra/3: [wrong, correct], [correct], [wrong ×3]; algebra/5: [✓ ✗ ✗], [✗ ✓ ✓].
    expect(rates).toMatchObject({ 'algebra/3': [1, 2, 3], 'algebra/10': [0, 1, 2], 'algebra/5': [1, 2, 2], 'geometry/1': [0, 0, 1] });
    expect(problems.find((p) => p.qid === 'algebra/3')!.firstPassRate).toBeCloseTo(1 / 3, 10);
  });

  it('shows both rates per policy version with their Wilson 95% intervals, named', () => {
    expect(wilsonInterval(8, 10)!.low).toBeCloseTo(0.4902, 3);
    expect(wilsonInterval(8, 10)!.high).toBeCloseTo(0.9433, 3);
    expect(wilsonInterval(0, 10)!.low).toBe(0);
    expect(wilsonInterval(0, 0)).toBeNull();
    const version = (v: number, n: number, any: number, first: number): VersionRewards => ({
      version: v,
      trajectories: n,
      meanReward: 0,
      meanReturn: 0,
      anySuccess: any / n,
      meanSpan: 0,
      maxSpan: 0,
      straddling: 0,
      meanOutputTokens: 0,
      truncatedShare: 0,
      contextExhausted: 0,
      byTurn: [{ turn: 0, trajectories: n, successRate: first / n, meanReward: 0, truncatedShare: 0 }],
    });
    const text = String(problemsPage('math', [], 0, 'passRate', 'desc', undefined, [version(0, 10, 8, 5), version(1, 20, 18, 12)]));
    expect(text).toContain('Wilson 95% interval');
    const row = (v: number) =>
      [...(text.split('<tr').find((r) => r.includes(`data-version="${v}"`)) ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) =>
        m[1]!.replace(/<[^>]+>/g, '').trim(),
      );
    expect(row(0)).toEqual(['0', '10', '50.0% [23.7, 76.3]', '80.0% [49.0, 94.3]']);
    expect(row(1)[2]).toMatch(/^60\.0% \[/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGroupView } from '../../src/store/read/group-view.js';
import { searchIds } from '../../src/store/read/id-search.js';
import { problemAcrossRuns, runProblems } from '../../src/store/read/run-problems.js';
import { listRunning, listTrajectories, type TrajectoryFilter, type TrajectoryOrder } from '../../src/store/read/trajectory-search.js';
import { loadStoredTurns, saveTurnOutput, saveVerdictAndFeedback, savePrompt, VERDICT_DETAIL_LIMIT } from '../../src/store/write/turn-store.js';
import { loadTrajectoryView } from '../../src/store/read/trajectory-view.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';
import { RUNNING_ID, seedTrajectoryList } from './trajectory-list-run.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrajectoryList(db.pool);
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

const newest: TrajectoryOrder = { sort: 'finished', direction: 'desc' };
const ids = async (filter: Omit<TrajectoryFilter, 'runId'>, order = newest, runId = 'math') =>
  (await listTrajectories(db.pool, { runId, ...filter }, order)).entries.map((t) => t.trajectoryId);

describe('the trajectory list', () => {
  it('lists a running trajectory under its whole qid, so a qid holding "/" finds it while it runs', async () => {
    const running = await listRunning(db.pool, { runId: 'math', qid: 'algebra/3' });
    expect(running.entries.map((t) => [t.trajectoryId, t.qid, t.verdicts, t.truncated, t.outputTokens])).toEqual([
      [RUNNING_ID, 'algebra/3', ['wrong'], [true], 2],
    ]);
    expect((await listRunning(db.pool, { runId: 'math', qid: 'algebra' })).count).toBe(0);
    expect((await listRunning(db.pool, { runId: 'math', qidContains: 'gebra/' })).count).toBe(1);
  });

  it('pages by keyset: pages never overlap, and rows stored meanwhile do not shift the next page', async () => {
    const first = await listTrajectories(db.pool, { runId: 'math' }, newest, undefined, 2);
    expect(first.entries.map((t) => t.trajectoryId)).toEqual(['math/geometry/1/0', 'math/algebra/10/1']);
    expect(first.total).toEqual({ count: 6, exact: true });
    await db.pool.query(`INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, output_tokens, finished_at)
      VALUES ('math/algebra/3/9', 'algebra/3', 'completed', 'seed', 0, 0, 0, now())`);
    const second = await listTrajectories(db.pool, { runId: 'math' }, newest, first.next!, 2);
    expect(second.entries.map((t) => t.trajectoryId)).toEqual(['math/algebra/10/0', 'math/algebra/3/2']);
    const third = await listTrajectories(db.pool, { runId: 'math' }, newest, second.next!, 2);
    expect(third.entries.map((t) => t.trajectoryId)).toEqual(['math/algebra/3/1', 'math/algebra/3/0']);
    expect(third.next).toBeNull();
    expect(third.total).toEqual({ count: 7, exact: true });
    await db.pool.query(`DELETE FROM trajectories WHERE trajectory_id = 'math/algebra/3/9'`);
    await db.pool.query(`UPDATE run_problems SET samples = samples - 1 WHERE run_id = 'math' AND qid = 'algebra/3'`);
  });

  it('sorts by return, correct turns, output tokens and turns, either way', async () => {
    expect(await ids({}, { sort: 'outputTokens', direction: 'desc' })).toEqual([
      'math/algebra/3/2',
      'math/algebra/10/0',
      'math/algebra/3/0',
      'math/algebra/3/1',
      'math/algebra/10/1',
      'math/geometry/1/0',
    ]);
    expect(await ids({}, { sort: 'turns', direction: 'asc' })).toEqual([
      'math/algebra/10/1',
      'math/algebra/3/1',
      'math/geometry/1/0',
      'math/algebra/10/0',
      'math/algebra/3/0',
      'math/algebra/3/2',
    ]);
    // R₀: 1, 0, 0, −1, −3, and the failed one (no rewards) last.
    expect(await ids({}, { sort: 'reward', direction: 'desc' })).toEqual([
      'math/algebra/3/1',
      'math/algebra/3/0',
      'math/algebra/10/0',
      'math/algebra/10/1',
      'math/algebra/3/2',
      'math/geometry/1/0',
    ]);
    const bySuccesses = await listTrajectories(db.pool, { runId: 'math' }, { sort: 'successes', direction: 'desc' }, undefined, 3);
    expect(bySuccesses.entries.map((t) => t.successes)).toEqual([1, 1, 1]);
    const rest = await listTrajectories(db.pool, { runId: 'math' }, { sort: 'successes', direction: 'desc' }, bySuccesses.next!, 3);
    expect(rest.entries.map((t) => t.successes)).toEqual([0, 0, 0]);
  });

  it('filters by runtime_error, truncation, staleness, status, policy version and qid substring, with per-turn verdicts', async () => {
    expect(await ids({ verdict: 'runtime_error' })).toEqual(['math/algebra/10/0']);
    expect(await ids({ truncated: true })).toEqual(['math/algebra/3/2']);
    expect(await ids({ stale: true }, newest, 'train')).toEqual(['train/q1/2']);
    expect(await ids({ status: 'failed' })).toEqual(['math/geometry/1/0']);
    expect(await ids({ policyVersion: 0, status: 'completed' })).toHaveLength(5);
    expect(await ids({ policyVersion: 1 })).toEqual([]);
    expect(await ids({ qidContains: 'algebra/1' })).toEqual(['math/algebra/10/1', 'math/algebra/10/0']);
    const page = await listTrajectories(db.pool, { runId: 'math', qidContains: 'algebra' }, newest);
    expect(page.total).toEqual({ count: 5, exact: true });
    expect(page.entries.find((t) => t.trajectoryId === 'math/algebra/3/2')).toMatchObject({
      verdicts: ['wrong', 'wrong', 'wrong'],
      truncated: [false, true, false],
    });
    expect((await listTrajectories(db.pool, { runId: 'math', verdict: 'wrong' }, newest)).total).toEqual({ count: 3, exact: true });
  });

  it('keeps pass rate per problem as trajectories are stored, and finds every run holding a problem', async () => {
    const { problems } = await runProblems(db.pool, 'math', 'passRate', 'desc');
    expect(problems.map((p) => [p.qid, p.samples, p.solved, p.failed])).toEqual([
      ['algebra/3', 3, 2, 0],
      ['algebra/10', 2, 1, 0],
      ['geometry/1', 1, 0, 1],
    ]);
    expect((await problemAcrossRuns(db.pool, 'algebra/3')).map((p) => [p.runId, p.samples])).toEqual([
      ['math', 3],
      ['other', 1],
    ]);
  });
});

describe('the group view', () => {
  it("shows each member's staleness from its membership, never the plain-run row without it", async () => {
    for (let i = 0; i < 5; i++) {
      const group = await loadGroupView(db.pool, 'train/q1');
      expect(group!.members.map((m) => [m.sample, m.staleness])).toEqual([
        [0, 0],
        [1, 0],
        [2, 0],
        [3, 0],
      ]);
    }
  });

  it("finds a plain run's group by its qid, running samples included", async () => {
    const group = await loadGroupView(db.pool, 'math/algebra/3');
    expect(group!.members.map((m) => [m.trajectoryId, m.status])).toEqual([
      ['math/algebra/3/0', 'completed'],
      ['math/algebra/3/1', 'completed'],
      ['math/algebra/3/2', 'completed'],
      [RUNNING_ID, 'running'],
    ]);
  });
});

describe("the search box's resolution", () => {
  it('names runs, groups, trajectories, qids across runs and substrings', async () => {
    expect(await searchIds(db.pool, 'math')).toMatchObject({ run: 'math', trajectory: null, group: null });
    expect(await searchIds(db.pool, 'train/q1')).toMatchObject({ group: 'train/q1', run: null });
    expect(await searchIds(db.pool, 'math/algebra/3')).toMatchObject({ group: 'math/algebra/3' });
    expect(await searchIds(db.pool, RUNNING_ID)).toMatchObject({ trajectory: RUNNING_ID });
    expect((await searchIds(db.pool, 'algebra/3')).qidRuns).toEqual([
      { runId: 'math', samples: 3 },
      { runId: 'other', samples: 1 },
    ]);
    expect((await searchIds(db.pool, 'gebra')).qidsContaining.map((q) => [q.qid, q.runs])).toEqual([
      ['algebra/10', 1],
      ['algebra/3', 2],
    ]);
    expect(await searchIds(db.pool, 'ds-17')).toEqual({
      trajectory: null,
      group: null,
      run: null,
      qidRuns: [],
      runsContaining: [],
      qidsContaining: [],
    });
  });
});

describe("a code turn's judge detail", () => {
  it("is kept with the turn's verdict, bounded, until persist reads it", async () => {
    const id = 'code/x/0';
    await savePrompt(db.pool, id, [1], 'p');
    await saveTurnOutput(db.pool, {
      trajectoryId: id,
      turn: 0,
      attempt: 1,
      contextLen: 1,
      outputIds: [2],
      outputLogprobs: [0],
      outputVersions: [0],
      finishReason: 'stop',
      versionStart: 0,
      versionEnd: 0,
    });
    const traceback = `test 1 of 2: crashed: exit status 1\n${'x'.repeat(VERDICT_DETAIL_LIMIT * 2)}`;
    await saveVerdictAndFeedback(
      db.pool,
      id,
      0,
      { answerText: 'a', extracted: 'print(1)', status: 'runtime_error', detail: traceback },
      { ids: [3], text: 'wrong' },
    );
    const { turns } = await loadStoredTurns(db.pool, id);
    expect(turns[0]!.verdictDetail).toBe(`${traceback.slice(0, VERDICT_DETAIL_LIMIT)}…`);
    expect((await loadTrajectoryView(db.pool, id)).turns[0]!.verdictDetail).toBe(turns[0]!.verdictDetail);
    expect((await loadTrajectoryView(db.pool, 'math/algebra/10/0')).turns[0]!.verdictDetail).toContain('ZeroDivisionError');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimBatch } from '../../src/store/write/batches.js';
import { admitGroups, joinGroup } from '../../src/store/write/rollout-groups.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { RUN_CURVES_BACKFILL_SQL } from '../../src/store/schema/run-curves-sql.js';
import { centredAdvantageBars, runCurves } from '../../src/store/read/run-curves.js';
import { storeCompletedTrajectory } from '../../src/store/write/trajectory-store.js';
import { rewardsByVersion } from '../../src/store/read/version-rewards.js';
import { CURVES_MEMBERS, CURVES_RUN, curvesTrajectory, seedCurvesRun } from './curves-run.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedCurvesRun(db.pool);
});

afterAll(async () => {
  await db?.stop();
});

// Every number below is worked out by hand from the fixture in ./curves-run.ts.
describe("a run's curves, kept by migration 012's triggers", () => {
  it("counts success and output length by turn, and per turn by the version of the turn's last token", async () => {
    const curves = await runCurves(db.pool, 'curves');
    expect(curves.byTurn).toEqual([
      { turn: 0, samples: 4, successRate: 0.25, meanOutputTokens: 40 },
      { turn: 1, samples: 1, successRate: 1, meanOutputTokens: 40 },
    ]);
    expect(curves.byTurnVersion).toEqual([
      { version: 0, turn: 0, samples: 2, successRate: 0.5, meanOutputTokens: 15 },
      { version: 0, turn: 1, samples: 1, successRate: 1, meanOutputTokens: 40 },
      { version: 1, turn: 0, samples: 1, successRate: 0, meanOutputTokens: 100 },
      { version: 2, turn: 0, samples: 1, successRate: 0, meanOutputTokens: 30 },
    ]);
  });

  it('gives reward, return, truncation and span by the version of the first generated token, with sample counts', async () => {
    const [v0, v1] = await rewardsByVersion(db.pool, 'curves');
    expect(v0).toEqual({
      version: 0,
      trajectories: 2,
      meanReward: 1 / 3,
      meanReturn: 0.5,
      anySuccess: 1,
      meanSpan: 0,
      maxSpan: 0,
      straddling: 0,
      meanOutputTokens: 35,
      truncatedShare: 0,
      contextExhausted: 0,
      byTurn: [
        { turn: 0, trajectories: 2, successRate: 0.5, meanReward: 0, truncatedShare: 0 },
        { turn: 1, trajectories: 1, successRate: 1, meanReward: 1, truncatedShare: 0 },
      ],
    });
    expect(v1).toEqual({
      version: 1,
      trajectories: 2,
      meanReward: -1,
      meanReturn: -1,
      anySuccess: 0,
      meanSpan: 0.5,
      maxSpan: 1,
      straddling: 0.5,
      meanOutputTokens: 65,
      truncatedShare: 0.5,
      contextExhausted: 0,
      byTurn: [{ turn: 0, trajectories: 2, successRate: 0, meanReward: -1, truncatedShare: 0.5 }],
    });
  });

  it('counts groups with no training signal and the group-relative advantages R₀ − group mean', async () => {
    const curves = await runCurves(db.pool, 'curves');
    expect(curves.groupsByVersion).toEqual([
      { version: 0, groups: 1, noSignalShare: 0 },
      { version: 1, groups: 1, noSignalShare: 1 },
    ]);
    // Bars of one 0.05 bin from −0.5 to +0.5: 21 of them, the zero bar in the middle, the empty ones kept.
    expect(curves.advantages).toHaveLength(21);
    expect(curves.advantages.filter((bar) => bar.samples > 0)).toEqual([
      { from: -0.525, to: -0.475, samples: 1 },
      { from: -0.025, to: 0.025, samples: 2 },
      { from: 0.475, to: 0.525, samples: 1 },
    ]);
  });

  it('bins advantages in equal bars centred on zero, to the largest |advantage| on both sides, whatever the smallest value', () => {
    // A million samples, skewed: advantages from −1.85 (bin −37) to +2.6 (bin 52), most near zero.
    const bins = Array.from({ length: 90 }, (_, k) => ({ bin: k - 37, n: Math.round(1_000_000 / (1 + Math.abs(k - 37)) / 20) }));
    const bars = centredAdvantageBars(bins);
    expect(bars.length % 2).toBe(1);
    const middle = bars[(bars.length - 1) / 2]!;
    expect(middle.from).toBeCloseTo(-middle.to, 9);
    expect(bars[0]!.from).toBeCloseTo(-bars.at(-1)!.to, 9);
    // Every bar equally wide (no edge bar cut short), the range covering every sample, nothing lost.
    const widths = new Set(bars.map((bar) => Math.round((bar.to - bar.from) * 1e6)));
    expect(widths.size).toBe(1);
    expect(bars[0]!.from).toBeLessThanOrEqual(-2.6);
    expect(bars.at(-1)!.to).toBeGreaterThanOrEqual(2.6);
    expect(bars.reduce((sum, bar) => sum + bar.samples, 0)).toBe(bins.reduce((sum, bin) => sum + bin.n, 0));
    expect(bars.length).toBeLessThanOrEqual(21);
    // The zero bar holds the zero bin and its neighbours alike on both sides.
    expect(middle.samples).toBe(bins.filter(({ bin }) => Math.abs(bin * 0.05) < middle.to).reduce((sum, bin) => sum + bin.n, 0));
  });

  it("buckets output lengths and sums the time buckets to the run's totals", async () => {
    const curves = await runCurves(db.pool, 'curves');
    expect(curves.outputLengths).toEqual([
      { from: 0, to: 16, turns: 1 },
      { from: 16, to: 32, turns: 2 },
      { from: 32, to: 48, turns: 1 },
      { from: 96, to: 112, turns: 1 },
    ]);
    // The four trajectories may straddle a minute: the buckets' weighted sums are what is fixed.
    const sum = (f: (p: (typeof curves.overTime)[number]) => number) => curves.overTime.reduce((s, p) => s + f(p), 0);
    expect(sum((p) => p.samples)).toBe(4);
    expect(sum((p) => p.samples * p.firstTurnSuccess!)).toBeCloseTo(1);
    expect(sum((p) => p.samples * p.anySuccess!)).toBeCloseTo(2);
    expect(sum((p) => p.samples * p.meanReturn!)).toBeCloseTo(-1);
    expect(sum((p) => p.samples * p.meanOutputTokens!)).toBeCloseTo(200);
    expect(sum((p) => p.groups)).toBe(2);
    expect(sum((p) => p.groups * p.noSignalShare!)).toBeCloseTo(1);
    if (curves.overTime.length === 1) expect(curves.overTime[0]).toMatchObject({ meanReward: -0.2, truncatedShare: 0.2 });
  });

  it('counts a trajectory persisted again once: the skipped insert fires no trigger', async () => {
    const before = await runCurves(db.pool, 'curves');
    const [id, turns] = CURVES_MEMBERS[1]!;
    expect(await storeCompletedTrajectory(db.pool, curvesTrajectory(id, turns))).toBe(false);
    expect(await runCurves(db.pool, 'curves')).toEqual(before);
  });

  it('bins staleness at hand-out, moving a member when a re-claim hands it out again', async () => {
    await publishPolicyVersion(db.pool, 2);
    // A lease of 1 ms: it has run out by the next claim, which hands the same groups out again.
    expect(await claimBatch(db.pool, { runId: 'curves', batchSize: 2, consumer: 'trainer', leaseMs: 1 })).toBeDefined();
    // g1 was generated under version 0 (2 behind), g2 under 1 (1 behind).
    expect((await runCurves(db.pool, 'curves')).staleness).toEqual([
      { staleness: 1, members: 2 },
      { staleness: 2, members: 2 },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await publishPolicyVersion(db.pool, 3);
    await claimBatch(db.pool, { runId: 'curves', batchSize: 2, consumer: 'trainer', leaseMs: 60_000 });
    expect((await runCurves(db.pool, 'curves')).staleness).toEqual([
      { staleness: 2, members: 2 },
      { staleness: 3, members: 2 },
    ]);
  });

  it('counts concurrent stores of one run exactly, without deadlocks between their aggregate rows', async () => {
    const run = { ...CURVES_RUN, runId: 'busy' };
    const members = Array.from({ length: 48 }, (_, i) =>
      curvesTrajectory(
        `curves/g${i >> 1}/${i & 1}`,
        [
          { success: i % 3 === 0, len: 10 + i, versionStart: i % 4, versionEnd: i % 4 },
          { success: true, len: 5, versionStart: i % 4, versionEnd: i % 4 },
        ],
        'busy',
      ),
    );
    for (const t of members)
      await joinGroup(db.pool, t.trajectoryId, t.qid, {
        run,
        groupId: t.trajectoryId.slice(0, t.trajectoryId.lastIndexOf('/')),
        size: 2,
        sample: Number(t.trajectoryId.at(-1)),
      });
    await admitGroups(db.pool, 'busy');
    await Promise.all(members.map((t) => storeCompletedTrajectory(db.pool, t)));
    const curves = await runCurves(db.pool, 'busy');
    expect(curves.byTurn.map((p) => p.samples)).toEqual([48, 48]);
    expect(curves.groupsByVersion.reduce((n, g) => n + g.groups, 0)).toBe(24);
    expect((await rewardsByVersion(db.pool, 'busy')).reduce((n, v) => n + v.trajectories, 0)).toBe(48);
  });

  it('sums hours instead of minutes for a run stored over more than 12 hours', async () => {
    for (const hoursAgo of [48, 24, 0]) {
      await db.pool.query(
        `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, version_start, version_end, rewards, raw_rewards, successes, finished_at)
         VALUES ($1, 'q', 'completed', 'seed', 1, 0, '{0}', '{0}', '{1}', '{1}', '{t}', date_trunc('hour', now()) - make_interval(hours => $2))`,
        [`long/q/${hoursAgo}`, hoursAgo],
      );
    }
    const { overTime } = await runCurves(db.pool, 'long');
    expect(overTime.map((p) => [(overTime.at(-1)!.time - p.time) / 3_600_000, p.samples])).toEqual([
      [48, 1],
      [24, 1],
      [0, 1],
    ]);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM run_hours WHERE run_id = 'long'");
    expect(rows[0].n).toBe(3);
  });

  it('backfills the same numbers from rows stored before the migration', async () => {
    const before = { curves: await runCurves(db.pool, 'curves'), versions: await rewardsByVersion(db.pool, 'curves') };
    await db.pool.query(`TRUNCATE run_versions, run_version_turns, run_turn_versions, run_length_bins, run_minutes, run_hours, run_group_versions,
      run_group_minutes, run_group_hours, run_advantage_bins, run_staleness`);
    expect((await runCurves(db.pool, 'curves')).byTurn).toEqual([]);
    await db.pool.query(RUN_CURVES_BACKFILL_SQL);
    expect({ curves: await runCurves(db.pool, 'curves'), versions: await rewardsByVersion(db.pool, 'curves') }).toEqual(before);
  });
});

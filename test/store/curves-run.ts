import type pg from 'pg';
import { admitGroups, joinGroup } from '../../src/store/write/rollout-groups.js';
import { storeCompletedTrajectory, type CompletedTrajectory } from '../../src/store/write/trajectory-store.js';

/**
 * A grouped run whose curves are worked out by hand (test/store/run-curves.test.ts): two groups of two, stored with
 * the project's own store functions so migration 012's triggers see what a real persist writes.
 *
 * - g1 (version 0): g1/0 wrong then right (raw −1, +1; R₀ = 0; 10 and 40 tokens), g1/1 right at once (+1; R₀ = 1; 20
 *   tokens). Returns differ: a training signal, advantages −0.5 and +0.5.
 * - g2 (version 1): g2/0 wrong and cut by the length limit (−1; 100 tokens), g2/1 wrong (−1; 30 tokens; its one turn
 *   ends under version 2, so it straddles). Both R₀ = −1: no training signal, advantages 0 and 0.
 */
export const CURVES_RUN = { runId: 'curves', maxHeadOffpolicyness: 1, batchSize: 2, maxConcurrent: 4 };

interface SeedTurn {
  success: boolean;
  len: number;
  versionStart: number;
  versionEnd: number;
  cut?: boolean;
}

export const CURVES_MEMBERS: readonly [id: string, turns: SeedTurn[]][] = [
  [
    'curves/g1/0',
    [
      { success: false, len: 10, versionStart: 0, versionEnd: 0 },
      { success: true, len: 40, versionStart: 0, versionEnd: 0 },
    ],
  ],
  ['curves/g1/1', [{ success: true, len: 20, versionStart: 0, versionEnd: 0 }]],
  ['curves/g2/0', [{ success: false, len: 100, versionStart: 1, versionEnd: 1, cut: true }]],
  ['curves/g2/1', [{ success: false, len: 30, versionStart: 1, versionEnd: 2 }]],
];

export function curvesTrajectory(id: string, turns: readonly SeedTurn[], runId = CURVES_RUN.runId): CompletedTrajectory {
  const raw = turns.map((t) => (t.success ? 1 : -1));
  return {
    trajectoryId: id.replace(/^curves\//, `${runId}/`),
    qid: id.split('/')[1]!,
    birthTime: 1_730_000_000_000,
    layout: 'seed',
    endReason: 'turns',
    promptIds: [1, 2],
    packed: {
      packedInputIds: [],
      packedLogprobs: [],
      promptMask: [],
      seqNoEosMask: turns.map((t) => t.cut ?? false),
      seqlens: [],
      promptLens: [],
      tokenVersions: [],
    },
    turns: turns.map((t, turn) => ({
      turn,
      contextLen: 2,
      outputLen: t.len,
      finishReason: t.cut ? 'length' : 'stop',
      versionStart: t.versionStart,
      versionEnd: t.versionEnd,
      verdict: t.success ? 'correct' : 'wrong',
      success: t.success,
      feedbackLen: 0,
    })),
    rewards: raw.map((_, i) => raw.slice(i).reduce((sum, r) => sum + r, 0)),
    rawRewards: raw,
    texts: [],
  };
}

/** Joins and stores the members (under another run id when given: two runs to overlay). */
export async function seedCurvesRun(pool: pg.Pool, runId = CURVES_RUN.runId): Promise<void> {
  const run = { ...CURVES_RUN, runId };
  const trajectories = CURVES_MEMBERS.map(([id, turns]) => curvesTrajectory(id, turns, runId));
  for (const trajectory of trajectories) {
    const [, group, sample] = trajectory.trajectoryId.split('/');
    await joinGroup(pool, trajectory.trajectoryId, trajectory.qid, { run, groupId: `${runId}/${group}`, size: 2, sample: Number(sample) });
  }
  // Admitted, as the admission controller would: only admitted groups are handed to a trainer.
  await admitGroups(pool, runId);
  for (const trajectory of trajectories) await storeCompletedTrajectory(pool, trajectory);
}

/**
 * One batch of the run's two groups handed to a consumer at policy version 2, written as ratchet_claim_batch would
 * leave it (staleness per member, the batch row), without the claim's readiness rules: the page only reads them.
 */
export async function handOutBatch(pool: pg.Pool, runId = CURVES_RUN.runId): Promise<string> {
  await pool.query(
    `UPDATE rollout_members m SET staleness = 2 - t.version_start[1], stale = 2 - t.version_start[1] > $2
     FROM trajectories t, rollout_groups g WHERE t.trajectory_id = m.trajectory_id AND g.group_id = m.group_id AND g.run_id = $1`,
    [runId, CURVES_RUN.maxHeadOffpolicyness],
  );
  const {
    rows: [batch],
  } = await pool.query<{ batch_id: string }>(
    `INSERT INTO rollout_batches (batch_id, run_id, consumer, policy_version, groups, trajectories, stale_trajectories, lease_expires_at)
     VALUES (gen_random_uuid(), $1, 'trainer-0', 2, 2, 4, 2, now() + interval '1 minute') RETURNING batch_id`,
    [runId],
  );
  return batch!.batch_id;
}

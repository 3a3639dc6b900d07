import type pg from 'pg';
import { ensureRun } from '../../src/store/write/rollout-groups.js';
import { recordTrainingStep } from '../../src/store/write/training-steps.js';

/** One stored trajectory's per-turn columns, as the seed's rewards and versions would leave them. */
export interface SeededTrajectory {
  id: string;
  status?: 'completed' | 'failed';
  successes: boolean[];
  versionStart: number[];
  versionEnd: number[];
}

/**
 * A training run with trajectories generated under versions 0, 1 and 2 (some straddling a weight update, one
 * stopping early), a failed one and one that ended before generating (both left out of rewards by version), and
 * three trainer steps. Rewards are the seed's: r_t = ±1, R₀ the undiscounted sum.
 */
export const TRAINING_RUN = { runId: 'steps', maxHeadOffpolicyness: 2, batchSize: 2, maxConcurrent: 4 };

export const SEEDED: readonly SeededTrajectory[] = [
  { id: 'steps/a/0', successes: [false, true], versionStart: [0, 0], versionEnd: [0, 1] },
  { id: 'steps/a/1', successes: [false, false], versionStart: [0, 0], versionEnd: [0, 0] },
  { id: 'steps/b/0', successes: [true], versionStart: [1], versionEnd: [1] },
  { id: 'steps/b/1', successes: [false, true], versionStart: [1, 1], versionEnd: [1, 3] },
  { id: 'steps/c/0', successes: [true], versionStart: [2], versionEnd: [2] },
  { id: 'steps/c/1', successes: [true], versionStart: [2], versionEnd: [2] },
  { id: 'steps/d/0', status: 'failed', successes: [], versionStart: [], versionEnd: [] },
  { id: 'steps/e/0', successes: [], versionStart: [], versionEnd: [] },
];

export const STEPS: readonly { step: number; policyVersion: number; metrics: Record<string, number> }[] = [
  {
    step: 0,
    policyVersion: 1,
    metrics: {
      loss: 0.9,
      mean_reward: -0.5,
      parity_mean_abs: 0.004,
      parity_p99_abs: 0.03,
      parity_max_abs: 0.2,
      version_lag_mean: 0,
      version_lag_max: 0,
    },
  },
  {
    step: 1,
    policyVersion: 2,
    metrics: {
      loss: 0.7,
      mean_reward: 0.25,
      parity_mean_abs: 0.006,
      parity_p99_abs: 0.05,
      parity_max_abs: 0.3,
      version_lag_mean: 0.5,
      version_lag_max: 1,
      grad_norm: 1.5,
    },
  },
  {
    step: 2,
    policyVersion: 3,
    metrics: {
      loss: 0.6,
      mean_reward: 0.75,
      parity_mean_abs: 0.005,
      parity_p99_abs: 0.12,
      parity_max_abs: 0.4,
      version_lag_mean: 1.25,
      version_lag_max: 3,
    },
  },
];

export async function seedTrainingRun(pool: pg.Pool): Promise<void> {
  await ensureRun(pool, TRAINING_RUN);
  for (const t of SEEDED) await storeTrajectoryRow(pool, t);
  for (const s of STEPS) await recordTrainingStep(pool, TRAINING_RUN.runId, s.step, s.policyVersion, s.metrics);
}

async function storeTrajectoryRow(pool: pg.Pool, t: SeededTrajectory): Promise<void> {
  const raw = t.successes.map((s) => (s ? 1 : -1));
  const returns = raw.map((_, i) => raw.slice(i).reduce((sum, r) => sum + r, 0));
  await pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, version_start, version_end, rewards, raw_rewards, successes)
     VALUES ($1, $2, $3, 'seed', $4, 0, $5, $6, $7, $8, $9)`,
    [t.id, t.id.split('/')[1], t.status ?? 'completed', t.successes.length, t.versionStart, t.versionEnd, returns, raw, t.successes],
  );
}

import type pg from 'pg';

/**
 * What a run was configured with, as Postgres stores it: the training run's row (rollout_runs), its group size, and
 * the sampling of its newest stored trajectory (every request carries it in full: src/trajectory/sampling.ts).
 * A plain `ratchet run` has no rollout_runs row: only its sampling and layout.
 */
export interface RunSettings {
  training: { maxHeadOffpolicyness: number; batchSize: number; maxConcurrent: number; groupSize: number | null; createdAt: Date } | null;
  sampling: { temperature: number | null; topP: number | null; topK: number | null; minP: number | null; repetitionPenalty: number | null } | null;
  layout: string | null;
}

export async function runSettings(pool: pg.Pool, runId: string): Promise<RunSettings> {
  const [run, newest] = await Promise.all([
    pool.query(
      `SELECT r.max_head_offpolicyness, r.batch_size, r.max_concurrent, r.created_at,
              (SELECT g.size FROM rollout_groups g WHERE g.run_id = r.run_id LIMIT 1) AS group_size
       FROM rollout_runs r WHERE r.run_id = $1`,
      [runId],
    ),
    // The newest row through trajectories_run_finished (run_id, finished_at DESC): one index probe.
    pool.query(
      `SELECT layout, temperature, top_p, top_k, min_p, repetition_penalty FROM trajectories
       WHERE run_id = $1 AND status = 'completed' ORDER BY finished_at DESC LIMIT 1`,
      [runId],
    ),
  ]);
  const r = run.rows[0];
  const t = newest.rows[0];
  return {
    training: r
      ? {
          maxHeadOffpolicyness: r.max_head_offpolicyness,
          batchSize: r.batch_size,
          maxConcurrent: r.max_concurrent,
          groupSize: r.group_size,
          createdAt: r.created_at,
        }
      : null,
    sampling: t ? { temperature: t.temperature, topP: t.top_p, topK: t.top_k, minP: t.min_p, repetitionPenalty: t.repetition_penalty } : null,
    layout: t?.layout ?? null,
  };
}

/** Training runs to offer in the run page's compare picker, newest first (a plain run's name can be typed). */
export async function trainingRunIds(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ run_id: string }>('SELECT run_id FROM rollout_runs ORDER BY created_at DESC LIMIT 100');
  return rows.map((row) => row.run_id);
}

import type pg from 'pg';

/** How many of a run's newest stored trajectories the self-correction rate is read from: a bounded index range, never the run. */
export const SELF_CORRECTION_WINDOW = 5_000;

/**
 * Self-correction over a run's newest completed trajectories: of the turns not correct that another turn followed,
 * how many were followed by a correct one, P(correct at t+1 | not correct at t).
 */
export interface SelfCorrection {
  /** Completed trajectories read (at most SELF_CORRECTION_WINDOW, the newest by finish). */
  trajectories: number;
  /** Turns t not correct (wrong, no answer, timeout, …) with a turn t+1 after them. */
  notCorrectFollowed: number;
  /** Of them, followed by a correct turn t+1. */
  corrected: number;
  /** corrected / notCorrectFollowed; null when no such turn. */
  rate: number | null;
}

/** What the run page's headline reads beyond its counters and curves. */
export interface RunHeadlineFacts {
  /** The newest published policy version (policy versions are shared by every run); null before the first publish. */
  newestPolicyVersion: number | null;
  selfCorrection: SelfCorrection;
}

export async function runHeadlineFacts(pool: pg.Pool, runId: string): Promise<RunHeadlineFacts> {
  const [versions, turns] = await Promise.all([
    pool.query<{ version: number | null }>('SELECT max(version) AS version FROM policy_versions'),
    pool.query<{ trajectories: number; not_correct: number; corrected: number }>(
      `SELECT count(*)::int AS trajectories, coalesce(sum(p.not_correct), 0)::int AS not_correct, coalesce(sum(p.corrected), 0)::int AS corrected
       FROM (SELECT successes FROM trajectories WHERE run_id = $1 AND status = 'completed' ORDER BY finished_at DESC LIMIT $2) t
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE NOT t.successes[i]) AS not_correct, count(*) FILTER (WHERE NOT t.successes[i] AND t.successes[i + 1]) AS corrected
         FROM generate_series(1, cardinality(t.successes) - 1) AS i) p`,
      [runId, SELF_CORRECTION_WINDOW],
    ),
  ]);
  const row = turns.rows[0]!;
  return {
    newestPolicyVersion: versions.rows[0]?.version ?? null,
    selfCorrection: {
      trajectories: row.trajectories,
      notCorrectFollowed: row.not_correct,
      corrected: row.corrected,
      rate: row.not_correct > 0 ? row.corrected / row.not_correct : null,
    },
  };
}

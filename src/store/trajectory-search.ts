import type pg from 'pg';

/** Filters of the runs page's trajectory list; each one left out matches everything. */
export interface TrajectoryFilter {
  runId: string;
  qid?: string;
  /** Some turn had this verdict (correct, wrong, no_answer, timeout, error). */
  verdict?: string;
  status?: 'completed' | 'failed' | 'running';
  failureType?: string;
  /** Some turn's last token came from this policy version. */
  policyVersion?: number;
  limit?: number;
}

export interface TrajectoryListEntry {
  trajectoryId: string;
  qid: string;
  status: 'completed' | 'failed' | 'running';
  turns: number;
  successes: number;
  failureType: string | null;
  outputTokens: number;
  finishedAt: Date | null;
}

/** Stored and running trajectories of a run, newest first, filtered. */
export async function searchTrajectories(pool: pg.Pool, filter: TrajectoryFilter): Promise<TrajectoryListEntry[]> {
  const { rows } = await pool.query(
    `WITH listed AS (
       SELECT trajectory_id, qid, status, num_turns AS turns, coalesce(array_length(array_positions(successes, true), 1), 0) AS successes,
              failure_type, output_tokens, finished_at
       FROM trajectories WHERE starts_with(trajectory_id, $1)
       UNION ALL
       SELECT p.trajectory_id, split_part(p.trajectory_id, '/', 2), 'running', (SELECT count(*) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id)::int,
              (SELECT count(*) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id AND o.verdict = 'correct')::int, NULL, 0, NULL
       FROM trajectory_prompts p WHERE starts_with(p.trajectory_id, $1) AND NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.trajectory_id = p.trajectory_id)
     )
     SELECT * FROM listed l
     WHERE ($2::text IS NULL OR l.qid = $2) AND ($3::text IS NULL OR l.status = $3) AND ($4::text IS NULL OR l.failure_type = $4)
       AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM monitor_records r WHERE r.trajectory_id = l.trajectory_id AND r.verdict = $5)
                              OR EXISTS (SELECT 1 FROM turn_texts x WHERE x.trajectory_id = l.trajectory_id AND x.verdict = $5))
       AND ($6::int IS NULL OR EXISTS (SELECT 1 FROM monitor_records r WHERE r.trajectory_id = l.trajectory_id AND r.version_end = $6))
     ORDER BY l.finished_at DESC NULLS FIRST, l.trajectory_id LIMIT $7`,
    [`${filter.runId}/`, filter.qid ?? null, filter.status ?? null, filter.failureType ?? null, filter.verdict ?? null, filter.policyVersion ?? null, filter.limit ?? 200],
  );
  return rows.map((row) => ({
    trajectoryId: row.trajectory_id, qid: row.qid, status: row.status, turns: row.turns, successes: row.successes,
    failureType: row.failure_type, outputTokens: row.output_tokens, finishedAt: row.finished_at,
  }));
}

import type pg from 'pg';

/** A run's group that has finished, for `RolloutClient.completions`. */
export interface FinishedGroupRow {
  groupId: string;
  qid: string;
  completed: number;
  failed: number;
  finishedAt: Date;
  /** The cursor: finished_at in microseconds, as Postgres keeps it (a millisecond Date would repeat a group). */
  finishedUs: string;
}

/** Up to 500 finished groups after the cursor (finished_at in µs, group id), oldest first. */
export async function finishedGroupsAfter(pool: pg.Pool, runId: string, after: readonly [string, string]): Promise<FinishedGroupRow[]> {
  const { rows } = await pool.query(
    `SELECT group_id, qid, completed, finished - completed AS failed, finished_at,
            (extract(epoch FROM finished_at) * 1000000)::bigint AS finished_us
     FROM rollout_groups WHERE run_id = $1 AND finished_at IS NOT NULL
       AND ((extract(epoch FROM finished_at) * 1000000)::bigint, group_id) > ($2::bigint, $3)
     ORDER BY finished_us, group_id LIMIT 500`,
    [runId, after[0], after[1]],
  );
  return rows.map((row) => ({
    groupId: row.group_id,
    qid: row.qid,
    completed: row.completed,
    failed: row.failed,
    finishedAt: row.finished_at,
    finishedUs: row.finished_us,
  }));
}

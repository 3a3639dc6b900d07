import type pg from 'pg';

/** A run's group that has finished, for `RolloutClient.completions`. */
export interface FinishedGroupRow {
  groupId: string;
  qid: string;
  completed: number;
  failed: number;
  finishedAt: Date;
  /** The cursor: the id of the transaction that finished the group (migration 020 says why not finished_at). */
  finishedXid: string;
}

/**
 * Up to 500 finished groups after the cursor (transaction id, group id), in that order, of those whose transaction is
 * older than every transaction still open: no group can become visible behind the cursor later.
 */
export async function finishedGroupsAfter(pool: pg.Pool, runId: string, after: readonly [string, string]): Promise<FinishedGroupRow[]> {
  const { rows } = await pool.query(
    `SELECT group_id, qid, completed, finished - completed AS failed, finished_at, finished_xid::text
     FROM rollout_groups WHERE run_id = $1 AND finished_xid IS NOT NULL
       AND (finished_xid, group_id) > ($2::xid8, $3) AND finished_xid < pg_snapshot_xmin(pg_current_snapshot())
     ORDER BY finished_xid, group_id LIMIT 500`,
    [runId, after[0], after[1]],
  );
  return rows.map((row) => ({
    groupId: row.group_id,
    qid: row.qid,
    completed: row.completed,
    failed: row.failed,
    finishedAt: row.finished_at,
    finishedXid: row.finished_xid,
  }));
}

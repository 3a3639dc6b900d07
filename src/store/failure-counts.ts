import type pg from 'pg';
import type { FailureClass } from '../trajectory/failure.js';

/** Failed trajectories of a run, counted by failure type and by class. */
export interface FailureCounts {
  failed: number;
  byType: Record<string, number>;
  byClass: Record<FailureClass, number>;
}

/**
 * Counts a run's failed trajectories. Only groups with a failed member are joined (finished > completed is
 * kept in the same transaction as the failed row). Rows stored before failure types had none: they count as
 * InternalError, infrastructure, as the persist activity treats a failure it cannot name.
 */
export async function countFailures(pool: pg.Pool, runId: string): Promise<FailureCounts> {
  const { rows } = await pool.query<{ failure_type: string; failure_class: FailureClass; n: number }>(
    `SELECT coalesce(t.failure_type, 'InternalError') AS failure_type, coalesce(t.failure_class, 'infrastructure') AS failure_class, count(*)::int AS n
     FROM rollout_groups g
     JOIN rollout_members m ON m.group_id = g.group_id
     JOIN trajectories t ON t.trajectory_id = m.trajectory_id
     WHERE g.run_id = $1 AND g.finished > g.completed AND t.status = 'failed'
     GROUP BY 1, 2 ORDER BY 1, 2`,
    [runId],
  );
  const counts: FailureCounts = { failed: 0, byType: {}, byClass: { infrastructure: 0, data: 0 } };
  for (const row of rows) {
    counts.failed += row.n;
    counts.byType[row.failure_type] = (counts.byType[row.failure_type] ?? 0) + row.n;
    counts.byClass[row.failure_class] += row.n;
  }
  return counts;
}

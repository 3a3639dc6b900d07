import type pg from 'pg';

/** Counts Prometheus reads at each scrape: every number comes from the tables the trainer reads too. */
export interface MetricCounts {
  trajectories: { status: string; failureType: string; failureClass: string; n: number }[];
  turns: { verdict: string; n: number }[];
  generatedTokens: number;
  batches: { claimed: number; acknowledged: number; expired: number };
  runs: { runId: string; pendingGroups: number; runningGroups: number; admitted: number; maxConcurrent: number }[];
  policyVersion: number;
  runningTrajectories: number;
  /** Trajectories whose closed workflow and row disagree, as the admission controller's sweep recorded them. */
  disagreements: { kind: string; n: number }[];
}

export async function readMetricCounts(pool: pg.Pool): Promise<MetricCounts> {
  const [trajectories, turns, tokens, batches, runs, version, running, disagreements] = await Promise.all([
    pool.query(
      `SELECT status, coalesce(failure_type, '') AS failure_type, coalesce(failure_class, '') AS failure_class, count(*)::int AS n
       FROM trajectories GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    pool.query('SELECT verdict, count(*)::int AS n FROM monitor_records GROUP BY 1 ORDER BY 1'),
    pool.query('SELECT coalesce(sum(output_tokens), 0)::bigint AS n FROM trajectories'),
    pool.query(
      `SELECT count(*)::int AS claimed, count(*) FILTER (WHERE acked_at IS NOT NULL)::int AS acknowledged,
              count(*) FILTER (WHERE acked_at IS NULL AND lease_expires_at < now())::int AS expired FROM rollout_batches`),
    pool.query(
      `SELECT r.run_id, r.max_concurrent, count(g.*) FILTER (WHERE g.status = 'pending')::int AS pending,
              count(g.*) FILTER (WHERE g.status = 'admitted' AND g.finished_at IS NULL)::int AS running,
              count(g.*) FILTER (WHERE g.status = 'admitted')::int AS admitted
       FROM rollout_runs r LEFT JOIN rollout_groups g USING (run_id) GROUP BY r.run_id, r.max_concurrent ORDER BY 1`),
    pool.query('SELECT coalesce(max(version), 0)::int AS v FROM policy_versions'),
    pool.query('SELECT count(*)::int AS n FROM trajectory_prompts p WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.trajectory_id = p.trajectory_id)'),
    pool.query('SELECT kind, count(*)::int AS n FROM status_disagreements GROUP BY 1 ORDER BY 1'),
  ]);
  return {
    trajectories: trajectories.rows.map((row) => ({ status: row.status, failureType: row.failure_type, failureClass: row.failure_class, n: row.n })),
    turns: turns.rows.map((row) => ({ verdict: row.verdict, n: row.n })),
    generatedTokens: Number(tokens.rows[0].n),
    batches: batches.rows[0],
    runs: runs.rows.map((row) => ({ runId: row.run_id, pendingGroups: row.pending, runningGroups: row.running, admitted: row.admitted, maxConcurrent: row.max_concurrent })),
    policyVersion: version.rows[0].v,
    runningTrajectories: running.rows[0].n,
    disagreements: disagreements.rows.map((row) => ({ kind: row.kind, n: row.n })),
  };
}

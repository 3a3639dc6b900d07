import type pg from 'pg';
import type { RunConfig } from '../../admission/group-membership.js';
import { readRunAggregates, type RunAggregates } from './run-aggregates.js';

/** Counts Prometheus reads at each scrape: every number comes from the tables the trainer reads too. */
export interface MetricCounts {
  /** Every run's aggregates (migration 013), the most recently active first. */
  runs: RunAggregates[];
  /** The settings of every training run, by run id. */
  settings: Map<string, RunConfig>;
  batches: { claimed: number; acknowledged: number; expired: number };
  policyVersion: number;
  /** Trajectories whose closed workflow and row disagree, as the admission controller's sweep recorded them. */
  disagreements: { kind: string; n: number }[];
}

/** Runs read per scrape: a deployment keeps far fewer; /metrics folds all but the most recent few into one label. */
const RUNS_READ = 10_000;

export async function readMetricCounts(pool: pg.Pool): Promise<MetricCounts> {
  const [runs, settings, batches, version, disagreements] = await Promise.all([
    readRunAggregates(pool, { limit: RUNS_READ }),
    pool.query('SELECT run_id, max_head_offpolicyness, batch_size, max_concurrent FROM rollout_runs'),
    pool.query(
      `SELECT count(*)::int AS claimed, count(*) FILTER (WHERE acked_at IS NOT NULL)::int AS acknowledged,
              count(*) FILTER (WHERE acked_at IS NULL AND lease_expires_at < now())::int AS expired FROM rollout_batches`,
    ),
    pool.query('SELECT coalesce(max(version), 0)::int AS v FROM policy_versions'),
    pool.query('SELECT kind, count(*)::int AS n FROM status_disagreements GROUP BY 1 ORDER BY 1'),
  ]);
  return {
    runs,
    settings: new Map(
      settings.rows.map((row) => [
        row.run_id,
        { runId: row.run_id, maxHeadOffpolicyness: row.max_head_offpolicyness, batchSize: row.batch_size, maxConcurrent: row.max_concurrent },
      ]),
    ),
    batches: batches.rows[0],
    policyVersion: version.rows[0].v,
    disagreements: disagreements.rows.map((row) => ({ kind: row.kind, n: row.n })),
  };
}

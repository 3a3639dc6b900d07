import type pg from 'pg';
import { readCounters, readRun } from './admission-store.js';
import { admissionCapacity, type StalenessBound } from './staleness.js';
import { countFailures, type FailureCounts } from '../store/failure-counts.js';

/** Where a run stands, in groups unless named otherwise. Every number is read from Postgres. */
export interface RunStatus extends StalenessBound {
  runId: string;
  policyVersion: number;
  /** Waiting for admission (complete or still joining). */
  waiting: number;
  running: number;
  /** Finished with at least one completed trajectory. */
  accepted: number;
  /** Finished with every trajectory failed. */
  rejected: number;
  cancelled: number;
  /** Finished, not yet acknowledged by a consumer (claimed or not). */
  unconsumed: number;
  consumed: number;
  /** Trajectories flagged stale in acknowledged batches. */
  staleConsumed: number;
  /** Groups admission would start now. */
  capacity: number;
  /** Failed trajectories (not groups), by failure type and by class (infrastructure or data). */
  failures: FailureCounts;
}

export async function runStatus(pool: pg.Pool, runId: string): Promise<RunStatus | undefined> {
  const run = await readRun(pool, runId);
  if (!run) return undefined;
  const [counters, failures] = await Promise.all([readCounters(pool, runId), countFailures(pool, runId)]);
  const { rows: [row] } = await pool.query(
    `SELECT count(*) FILTER (WHERE status = 'pending' AND finished_at IS NULL) AS waiting,
            count(*) FILTER (WHERE status = 'admitted' AND finished_at IS NOT NULL AND completed = 0) AS rejected,
            count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
            count(*) FILTER (WHERE status = 'admitted' AND finished_at IS NOT NULL AND completed > 0 AND consumed_at IS NULL) AS unconsumed,
            count(*) FILTER (WHERE consumed_at IS NOT NULL) AS consumed,
            (SELECT coalesce(sum(stale_trajectories), 0) FROM rollout_batches WHERE run_id = $1 AND acked_at IS NOT NULL) AS stale
     FROM rollout_groups WHERE run_id = $1`,
    [runId],
  );
  return {
    ...run,
    policyVersion: counters.version,
    waiting: Number(row.waiting),
    running: counters.running,
    accepted: counters.accepted,
    rejected: Number(row.rejected),
    cancelled: Number(row.cancelled),
    unconsumed: Number(row.unconsumed),
    consumed: Number(row.consumed),
    staleConsumed: Number(row.stale),
    capacity: admissionCapacity(run, counters),
    failures,
  };
}

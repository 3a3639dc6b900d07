import type pg from 'pg';

/** A batch handed to a consumer (rollout_batches), as the run page lists it. */
export interface BatchListEntry {
  batchId: string;
  consumer: string;
  policyVersion: number;
  groups: number;
  trajectories: number;
  staleTrajectories: number;
  claimedAt: Date;
  leaseExpiresAt: Date;
  /** Null while the consumer holds it unacknowledged (or after it let the lease run out). */
  ackedAt: Date | null;
}

/** How many batches the page lists: the newest, read through rollout_batches_run (run_id, claimed_at). */
export const LISTED_BATCHES = 20;

/** The run's newest batches and how many it has had. */
export async function listBatches(pool: pg.Pool, runId: string): Promise<{ total: number; latest: BatchListEntry[] }> {
  const [total, latest] = await Promise.all([
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM rollout_batches WHERE run_id = $1', [runId]),
    pool.query(
      `SELECT batch_id, consumer, policy_version, groups, trajectories, stale_trajectories, claimed_at, lease_expires_at, acked_at
       FROM rollout_batches WHERE run_id = $1 ORDER BY claimed_at DESC LIMIT $2`,
      [runId, LISTED_BATCHES],
    ),
  ]);
  return {
    total: total.rows[0]!.n,
    latest: latest.rows.map((row) => ({
      batchId: row.batch_id,
      consumer: row.consumer,
      policyVersion: row.policy_version,
      groups: row.groups,
      trajectories: row.trajectories,
      staleTrajectories: row.stale_trajectories,
      claimedAt: row.claimed_at,
      leaseExpiresAt: row.lease_expires_at,
      ackedAt: row.acked_at,
    })),
  };
}

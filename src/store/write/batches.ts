import type pg from 'pg';

export class UnknownRun extends Error {
  override readonly name = 'UnknownRun';
}
export class UnknownBatch extends Error {
  override readonly name = 'UnknownBatch';
}
/** The batch's lease ran out and another consumer claimed some of its groups: this consumer must drop it. */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}

export interface ClaimRequest {
  runId: string;
  /** Groups per batch. */
  batchSize: number;
  /** Who claims, for operators: a hostname, a trainer rank. */
  consumer: string;
  leaseMs: number;
  /** Hand out fewer groups than batchSize (at least one) rather than nothing. */
  partial?: boolean;
}

export interface ClaimedTrajectory {
  trajectoryId: string;
  groupId: string;
  /** Policy version at hand-out minus the trajectory's oldest token version. */
  staleness: number;
  stale: boolean;
}

export interface ClaimedBatch {
  batchId: string;
  runId: string;
  consumer: string;
  /** The latest policy version when the batch was claimed. */
  policyVersion: number;
  leaseExpiresAt: Date;
  groupIds: string[];
  /** Completed trajectories of those groups, group by group; failed members are not handed out. */
  trajectories: ClaimedTrajectory[];
  staleTrajectories: number;
}

interface ClaimRow {
  batch_id: string;
  policy_version: number;
  lease_expires_at: Date;
  group_id: string;
  trajectory_id: string;
  staleness: number;
  stale: boolean;
}

/**
 * Claims finished groups, oldest birth_time first, for one consumer (`ratchet_claim_batch`, migration 006:
 * the Python package calls the same function). Concurrent consumers never share a group; a group whose lease
 * ran out is claimable again. Returns undefined when too few groups are ready.
 */
export async function claimBatch(pool: pg.Pool, request: ClaimRequest): Promise<ClaimedBatch | undefined> {
  const { rows } = await protocol(() =>
    pool.query<ClaimRow>('SELECT * FROM ratchet_claim_batch($1, $2, $3, $4, $5)', [
      request.runId,
      request.batchSize,
      request.consumer,
      request.leaseMs / 1000,
      request.partial ?? false,
    ]),
  );
  const first = rows[0];
  if (!first) return undefined;
  const trajectories = rows.map((row) => ({ trajectoryId: row.trajectory_id, groupId: row.group_id, staleness: row.staleness, stale: row.stale }));
  return {
    batchId: first.batch_id,
    runId: request.runId,
    consumer: request.consumer,
    policyVersion: first.policy_version,
    leaseExpiresAt: first.lease_expires_at,
    groupIds: [...new Set(rows.map((row) => row.group_id))],
    trajectories,
    staleTrajectories: trajectories.filter((t) => t.stale).length,
  };
}

/**
 * Marks a batch consumed: its groups are never handed out again. Acknowledging twice is harmless. A batch
 * whose lease ran out is still accepted if no other consumer has claimed its groups meanwhile.
 */
export async function acknowledgeBatch(pool: pg.Pool, batchId: string): Promise<{ alreadyAcknowledged: boolean }> {
  const {
    rows: [row],
  } = await protocol(() => pool.query<{ acked: boolean }>('SELECT ratchet_ack_batch($1) AS acked', [batchId]));
  return { alreadyAcknowledged: row!.acked };
}

/** Extends a claimed batch's lease, for a consumer that needs longer than it first asked for. */
export async function extendLease(pool: pg.Pool, batchId: string, leaseMs: number): Promise<Date> {
  const {
    rows: [row],
  } = await protocol(() => pool.query<{ expires: Date }>('SELECT ratchet_extend_lease($1, $2) AS expires', [batchId, leaseMs / 1000]));
  return row!.expires;
}

/**
 * Gives a claimed batch's groups back at once, for a consumer that could not use them (its output could not be
 * written): the next consumer claims them without waiting out the lease, and this batch can no longer be acked.
 */
export async function releaseBatch(pool: pg.Pool, batchId: string): Promise<{ releasedGroups: number }> {
  const {
    rows: [row],
  } = await protocol(() => pool.query<{ released: number }>('SELECT ratchet_release_batch($1) AS released', [batchId]));
  return { releasedGroups: row!.released };
}

/** The protocol's SQLSTATEs (migration 006) as typed errors; the message is the function's own. */
async function protocol<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    if (code === 'RV002') throw new UnknownRun(message, { cause: error });
    if (code === 'RV003') throw new LeaseLost(message, { cause: error });
    if (code === 'RV004') throw new UnknownBatch(message, { cause: error });
    throw error;
  }
}

import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { readRun } from '../admission/admission-store.js';
import { isStale, stalenessAt } from '../admission/staleness.js';
import { latestPolicyVersion } from '../store/policy-versions.js';
import { inTransaction } from '../store/transaction.js';

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

/**
 * Claims finished groups, oldest birth_time first, for one consumer. Row locks with SKIP LOCKED let
 * concurrent consumers claim side by side without ever sharing a group. A group whose lease ran out is
 * claimable again. Returns undefined when too few groups are ready.
 */
export async function claimBatch(pool: pg.Pool, request: ClaimRequest): Promise<ClaimedBatch | undefined> {
  return inTransaction(pool, async (client) => {
    const run = await readRun(client, request.runId);
    if (!run) throw new UnknownRun(`no run ${request.runId}: it is created by the first trajectory submitted to it`);
    const { rows: groups } = await client.query<{ group_id: string }>(
      `SELECT group_id FROM rollout_groups
       WHERE run_id = $1 AND finished_at IS NOT NULL AND consumed_at IS NULL AND completed > 0
         AND (lease_expires_at IS NULL OR lease_expires_at < clock_timestamp())
       ORDER BY birth_time, seq LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [request.runId, request.batchSize],
    );
    if (groups.length === 0 || (groups.length < request.batchSize && !request.partial)) return undefined;
    const groupIds = groups.map((group) => group.group_id);
    const version = (await latestPolicyVersion(client))?.version ?? 0;
    const { rows: members } = await client.query<{ trajectory_id: string; group_id: string; oldest: number | null }>(
      `SELECT m.trajectory_id, m.group_id, (SELECT min(v) FROM unnest(t.version_start) v) AS oldest
       FROM rollout_members m JOIN trajectories t USING (trajectory_id) JOIN rollout_groups g USING (group_id)
       WHERE m.group_id = ANY($1) AND t.status = 'completed' ORDER BY g.birth_time, g.seq, m.sample`,
      [groupIds],
    );
    const trajectories = members.map((member) => {
      const staleness = stalenessAt(version, member.oldest ?? version);
      return { trajectoryId: member.trajectory_id, groupId: member.group_id, staleness, stale: isStale(run, staleness) };
    });
    const batchId = randomUUID();
    const staleTrajectories = trajectories.filter((t) => t.stale).length;
    const { rows: [batch] } = await client.query<{ lease_expires_at: Date }>(
      `INSERT INTO rollout_batches (batch_id, run_id, consumer, policy_version, groups, trajectories, stale_trajectories, lease_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp() + make_interval(secs => $8)) RETURNING lease_expires_at`,
      [batchId, request.runId, request.consumer, version, groupIds.length, trajectories.length, staleTrajectories, request.leaseMs / 1000],
    );
    await client.query('UPDATE rollout_groups SET batch_id = $1, lease_expires_at = $2 WHERE group_id = ANY($3)', [batchId, batch!.lease_expires_at, groupIds]);
    await client.query(
      `UPDATE rollout_members m SET staleness = t.staleness, stale = t.stale
       FROM unnest($1::text[], $2::int[], $3::boolean[]) AS t(trajectory_id, staleness, stale) WHERE m.trajectory_id = t.trajectory_id`,
      [trajectories.map((t) => t.trajectoryId), trajectories.map((t) => t.staleness), trajectories.map((t) => t.stale)],
    );
    return { batchId, runId: request.runId, consumer: request.consumer, policyVersion: version, leaseExpiresAt: batch!.lease_expires_at, groupIds, trajectories, staleTrajectories };
  });
}

/**
 * Marks a batch consumed: its groups are never handed out again. Acknowledging twice is harmless. A batch
 * whose lease ran out is still accepted if no other consumer has claimed its groups meanwhile.
 */
export async function acknowledgeBatch(pool: pg.Pool, batchId: string): Promise<{ alreadyAcknowledged: boolean }> {
  return inTransaction(pool, async (client) => {
    const batch = await lockBatch(client, batchId);
    if (batch.acked_at) return { alreadyAcknowledged: true };
    const consumed = await client.query('UPDATE rollout_groups SET consumed_at = clock_timestamp() WHERE batch_id = $1 AND consumed_at IS NULL', [batchId]);
    if (consumed.rowCount !== batch.groups) throw leaseLost(batchId, batch.groups - (consumed.rowCount ?? 0), batch.groups);
    await client.query('UPDATE rollout_batches SET acked_at = clock_timestamp() WHERE batch_id = $1', [batchId]);
    return { alreadyAcknowledged: false };
  });
}

/** Extends a claimed batch's lease, for a consumer that needs longer than it first asked for. */
export async function extendLease(pool: pg.Pool, batchId: string, leaseMs: number): Promise<Date> {
  return inTransaction(pool, async (client) => {
    const batch = await lockBatch(client, batchId);
    if (batch.acked_at) throw new UnknownBatch(`batch ${batchId} is already acknowledged`);
    const { rows } = await client.query<{ lease_expires_at: Date }>(
      `UPDATE rollout_groups SET lease_expires_at = clock_timestamp() + make_interval(secs => $2)
       WHERE batch_id = $1 AND consumed_at IS NULL RETURNING lease_expires_at`,
      [batchId, leaseMs / 1000],
    );
    if (rows.length !== batch.groups) throw leaseLost(batchId, batch.groups - rows.length, batch.groups);
    await client.query('UPDATE rollout_batches SET lease_expires_at = $2 WHERE batch_id = $1', [batchId, rows[0]!.lease_expires_at]);
    return rows[0]!.lease_expires_at;
  });
}

/**
 * Gives a claimed batch's groups back at once, for a consumer that could not use them (its output could not be
 * written): the next consumer claims them without waiting out the lease, and this batch can no longer be acked.
 */
export async function releaseBatch(pool: pg.Pool, batchId: string): Promise<{ releasedGroups: number }> {
  return inTransaction(pool, async (client) => {
    const batch = await lockBatch(client, batchId);
    if (batch.acked_at) throw new UnknownBatch(`batch ${batchId} is already acknowledged`);
    const released = await client.query(
      'UPDATE rollout_groups SET batch_id = NULL, lease_expires_at = NULL WHERE batch_id = $1 AND consumed_at IS NULL', [batchId],
    );
    await client.query('UPDATE rollout_batches SET lease_expires_at = clock_timestamp() WHERE batch_id = $1', [batchId]);
    return { releasedGroups: released.rowCount ?? 0 };
  });
}

async function lockBatch(client: pg.PoolClient, batchId: string): Promise<{ groups: number; acked_at: Date | null }> {
  if (!/^[0-9a-f-]{36}$/i.test(batchId)) throw new UnknownBatch(`"${batchId}" is not a batch id (a UUID printed by consume)`);
  const { rows: [batch] } = await client.query('SELECT groups, acked_at FROM rollout_batches WHERE batch_id = $1 FOR UPDATE', [batchId]);
  if (!batch) throw new UnknownBatch(`no batch ${batchId}`);
  return batch;
}

function leaseLost(batchId: string, lost: number, groups: number): LeaseLost {
  return new LeaseLost(`batch ${batchId}: its lease ran out and ${lost} of its ${groups} groups were handed to another consumer; drop it`);
}

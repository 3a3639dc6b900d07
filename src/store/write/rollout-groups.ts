import type pg from 'pg';
import { inTransaction } from '../transaction.js';
import { admissionCapacity, type AdmissionCounters, type StalenessBound } from '../../admission/staleness.js';
import type { GroupMembership, GroupStatus, RunConfig } from '../../admission/group-membership.js';

/** Channel notified when a member joins or a group finishes, so the controller re-checks capacity at once. */
export const ADMISSION_CHANNEL = 'ratchet_admission';

export class RunConfigMismatch extends Error {
  override readonly name = 'RunConfigMismatch';
}
export class GroupMismatch extends Error {
  override readonly name = 'GroupMismatch';
}

/**
 * Registers one member of a group (and the run and group on first sight). Idempotent: a retried activity or
 * a re-check changes nothing. Returns the group's status, which tells the member whether it may generate.
 */
export async function joinGroup(pool: pg.Pool, trajectoryId: string, qid: string, group: GroupMembership): Promise<GroupStatus> {
  return inTransaction(pool, (client) => joinInTransaction(client, trajectoryId, qid, group));
}

/**
 * Counts a trajectory that failed before it could join its group (its request was invalid in some other part) as
 * a member, so that the group can fill and its siblings are not left waiting for good; the caller then records it
 * finished. Inside the caller's transaction; a group or run this member contradicts is left as it is.
 */
export async function joinGroupAsFailed(client: pg.PoolClient, trajectoryId: string, qid: string, group: GroupMembership): Promise<void> {
  await client.query('SAVEPOINT join_as_failed');
  try {
    await joinInTransaction(client, trajectoryId, qid, group);
    await client.query('RELEASE SAVEPOINT join_as_failed');
  } catch (error) {
    if (!(error instanceof GroupMismatch || error instanceof RunConfigMismatch)) throw error;
    await client.query('ROLLBACK TO SAVEPOINT join_as_failed');
  }
}

/** The run (on first sight), the group (on first sight) and the member, with the group's row locked; its status. */
async function joinInTransaction(client: pg.PoolClient, trajectoryId: string, qid: string, group: GroupMembership): Promise<GroupStatus> {
  await ensureRun(client, group.run);
  await client.query(`INSERT INTO rollout_groups (group_id, run_id, qid, size) VALUES ($1, $2, $3, $4) ON CONFLICT (group_id) DO NOTHING`, [
    group.groupId,
    group.run.runId,
    qid,
    group.size,
  ]);
  const {
    rows: [existing],
  } = await client.query<{ run_id: string; size: number; status: GroupStatus }>(
    'SELECT run_id, size, status FROM rollout_groups WHERE group_id = $1 FOR UPDATE',
    [group.groupId],
  );
  if (existing!.run_id !== group.run.runId || existing!.size !== group.size) {
    throw new GroupMismatch(
      `group ${group.groupId} exists in run ${existing!.run_id} with ${existing!.size} samples; this request says run ${group.run.runId} with ${group.size}`,
    );
  }
  const joined = await client.query(
    'INSERT INTO rollout_members (trajectory_id, group_id, sample) VALUES ($1, $2, $3) ON CONFLICT (trajectory_id) DO NOTHING',
    [trajectoryId, group.groupId, group.sample],
  );
  if (joined.rowCount === 1) {
    await client.query('UPDATE rollout_groups SET joined = joined + 1 WHERE group_id = $1', [group.groupId]);
    await client.query('SELECT pg_notify($1, $2)', [ADMISSION_CHANNEL, group.run.runId]);
  }
  return existing!.status;
}

/** Creates the run on first sight; a run that exists must have the same settings (`ratchet_ensure_run`, migration 006). */
export async function ensureRun(client: pg.Pool | pg.PoolClient, run: RunConfig): Promise<void> {
  try {
    await client.query('SELECT ratchet_ensure_run($1, $2, $3, $4)', [run.runId, run.maxHeadOffpolicyness, run.batchSize, run.maxConcurrent]);
  } catch (error) {
    if ((error as { code?: string }).code === 'RV005') throw new RunConfigMismatch((error as Error).message, { cause: error });
    throw error;
  }
}

export async function readRun(client: pg.Pool | pg.PoolClient, runId: string, lock = false): Promise<RunConfig | undefined> {
  const {
    rows: [row],
  } = await client.query(
    `SELECT run_id, max_head_offpolicyness, batch_size, max_concurrent FROM rollout_runs WHERE run_id = $1${lock ? ' FOR UPDATE' : ''}`,
    [runId],
  );
  return row && { runId: row.run_id, maxHeadOffpolicyness: row.max_head_offpolicyness, batchSize: row.batch_size, maxConcurrent: row.max_concurrent };
}

export interface AdmittedGroup {
  groupId: string;
  trajectoryIds: string[];
}

/**
 * Admits waiting groups, oldest submission first, as far as the run's capacity allows. The run row is locked
 * for the transaction, so concurrent controllers admit one after the other and the bound holds across them.
 * Only complete groups (every member has joined) are admitted.
 */
export async function admitGroups(pool: pg.Pool, runId: string): Promise<AdmittedGroup[]> {
  return inTransaction(pool, async (client) => {
    const run = await readRun(client, runId, true);
    if (!run) return [];
    const counters = await readCounters(client, runId);
    const capacity = admissionCapacity(run, counters);
    if (capacity === 0) return [];
    // Each admitted group records the counters as they stood when it was admitted (running grows by one per group).
    const { rows } = await client.query<{ group_id: string; trajectory_ids: string[] }>(
      `WITH chosen AS (
         SELECT group_id, row_number() OVER (ORDER BY seq) - 1 AS ahead FROM rollout_groups
         WHERE run_id = $1 AND status = 'pending' AND joined = size AND finished_at IS NULL ORDER BY seq LIMIT $2
       ), admitted AS (
         UPDATE rollout_groups g SET status = 'admitted', admitted_at = clock_timestamp(), admitted_version = $3,
           admitted_accepted = $4, admitted_running = $5 + chosen.ahead
         FROM chosen WHERE g.group_id = chosen.group_id RETURNING g.group_id, g.seq
       )
       SELECT a.group_id, array_agg(m.trajectory_id ORDER BY m.sample) AS trajectory_ids
       FROM admitted a JOIN rollout_members m USING (group_id) GROUP BY a.group_id, a.seq ORDER BY a.seq`,
      [runId, capacity, counters.version, counters.accepted, counters.running],
    );
    return rows.map((row) => ({ groupId: row.group_id, trajectoryIds: row.trajectory_ids }));
  });
}

/** The counters of AReaL's staleness formula, read from the rows they count (never kept in memory). */
export async function readCounters(client: pg.Pool | pg.PoolClient, runId: string): Promise<AdmissionCounters> {
  const {
    rows: [row],
  } = await client.query(
    `SELECT (SELECT coalesce(max(version), 0) FROM policy_versions) AS version,
            count(*) FILTER (WHERE status = 'admitted' AND finished_at IS NULL) AS running,
            count(*) FILTER (WHERE status = 'admitted' AND finished_at IS NOT NULL AND completed > 0) AS accepted
     FROM rollout_groups WHERE run_id = $1`,
    [runId],
  );
  return { version: Number(row.version), running: Number(row.running), accepted: Number(row.accepted) };
}

/** Runs that have complete groups waiting. */
export async function runsWithWaitingGroups(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ run_id: string }>(
    `SELECT DISTINCT run_id FROM rollout_groups WHERE status = 'pending' AND joined = size AND finished_at IS NULL`,
  );
  return rows.map((row) => row.run_id);
}

/**
 * Members of admitted groups that may not have heard so (they have not stored a prompt yet): after a
 * controller restart they are told again. Telling one twice is harmless.
 */
export async function unstartedAdmittedMembers(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ trajectory_id: string }>(
    `SELECT m.trajectory_id FROM rollout_members m JOIN rollout_groups g USING (group_id)
     WHERE g.status = 'admitted' AND g.finished_at IS NULL AND NOT m.finished
       AND NOT EXISTS (SELECT 1 FROM trajectory_prompts p WHERE p.trajectory_id = m.trajectory_id)`,
  );
  return rows.map((row) => row.trajectory_id);
}

/**
 * Counts a member's end in its group, inside the transaction that stores the trajectory, so the counters
 * move exactly once per trajectory. A trajectory outside any group changes nothing.
 */
export async function recordMemberFinished(client: pg.PoolClient, trajectoryId: string, completed: boolean, birthTime: number): Promise<void> {
  const {
    rows: [member],
  } = await client.query<{ group_id: string; run_id: string }>(
    `UPDATE rollout_members m SET finished = true FROM rollout_groups g
     WHERE m.trajectory_id = $1 AND NOT m.finished AND g.group_id = m.group_id RETURNING m.group_id, g.run_id`,
    [trajectoryId],
  );
  if (!member) return;
  const {
    rows: [group],
  } = await client.query<{ finished: number; size: number }>(
    `UPDATE rollout_groups SET finished = finished + 1, completed = completed + $2::int,
       birth_time = LEAST(coalesce(birth_time, $3), $3),
       finished_at = CASE WHEN finished + 1 = size THEN clock_timestamp() END,
       finished_xid = CASE WHEN finished + 1 = size THEN pg_current_xact_id() END
     WHERE group_id = $1 RETURNING finished, size`,
    [member.group_id, completed ? 1 : 0, birthTime],
  );
  if (group!.finished === group!.size) await client.query('SELECT pg_notify($1, $2)', [ADMISSION_CHANNEL, member.run_id]);
}

/**
 * Cancels groups: waiting ones are never admitted; admitted ones are left to end as their members are cancelled.
 * Returns the members whose workflows should be cancelled (`ratchet_cancel_groups`, migration 006).
 */
export async function cancelGroups(pool: pg.Pool, where: { runId: string } | { groupId: string }): Promise<string[]> {
  const [runId, groupId] = 'runId' in where ? [where.runId, null] : [null, where.groupId];
  const { rows } = await pool.query<{ trajectory_id: string }>('SELECT ratchet_cancel_groups($1, $2) AS trajectory_id', [runId, groupId]);
  return rows.map((row) => row.trajectory_id);
}

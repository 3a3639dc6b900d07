import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type pg from 'pg';

/** How the stored trajectories of a run ended; failed ones by failure type when the table has the column. */
export async function outcomes(pool: pg.Pool, runId: string): Promise<{ completed: number; failed: number; failedByType: Record<string, number>; failedIds: Set<string>; extraRows: number }> {
  const { rows: [column] } = await pool.query(
    "SELECT 1 FROM information_schema.columns WHERE table_name = 'trajectories' AND column_name = 'failure_type'",
  );
  const typeExpression = column ? "coalesce(failure_type, 'untyped')" : "'untyped'";
  const { rows } = await pool.query<{ trajectory_id: string; status: string; failure_type: string }>(
    `SELECT trajectory_id, status, ${typeExpression} AS failure_type FROM trajectories WHERE trajectory_id LIKE $1`, [`${runId}/%`],
  );
  // trajectory_id is the primary key today; counted anyway, since "exactly one row per trajectory" is the claim.
  const { rows: [rowCount] } = await pool.query<{ extra: string }>(
    'SELECT count(*) - count(DISTINCT trajectory_id) AS extra FROM trajectories WHERE trajectory_id LIKE $1', [`${runId}/%`],
  );
  const failedByType: Record<string, number> = {};
  const failedIds = new Set<string>();
  let completed = 0;
  for (const row of rows) {
    if (row.status === 'completed') completed++;
    else {
      failedIds.add(row.trajectory_id);
      failedByType[row.failure_type] = (failedByType[row.failure_type] ?? 0) + 1;
    }
  }
  return { completed, failed: failedIds.size, failedByType, failedIds, extraRows: Number(rowCount!.extra) };
}

/** Rows left in the tables that should drain as trajectories finish and batches are acknowledged. */
export async function workingTableRows(pool: pg.Pool): Promise<Record<string, number | null>> {
  const count = async (table: string, where = '') => {
    const { rows: [exists] } = await pool.query<{ name: string | null }>('SELECT to_regclass($1) AS name', [table]);
    if (!exists?.name) return null; // not in this schema (yet)
    const { rows: [row] } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} ${where}`);
    return Number(row!.n);
  };
  return {
    trajectory_prompts: await count('trajectory_prompts'),
    turn_outputs: await count('turn_outputs'),
    turn_checkpoints: await count('turn_checkpoints'),
    unacknowledged_rollout_batches: await count('rollout_batches', 'WHERE acked_at IS NULL'),
  };
}

export interface LargestHistory {
  workflowId: string;
  runId: string;
  events: number;
  bytes: number;
}

export interface HistoryAudit {
  /** How the histories were found, for the report. */
  method: string;
  runsInspected: number;
  /** History events of every run of every trajectory: the work Temporal did for the whole soak. */
  totalEvents: number;
  largestByEvents: LargestHistory;
  largestByBytes: LargestHistory;
  /** Runs that ended in continue-as-new, in all, and most for one trajectory. */
  continuedAsNew: number;
  mostContinuationsOfOne: number;
}

/**
 * The largest history of any run of any trajectory: every workflow's current run (describe), plus every
 * earlier run that ended in continue-as-new (visibility keeps their history length and size).
 */
export async function historyAudit(client: Client, trajectoryIds: readonly string[], concurrency = 32): Promise<HistoryAudit> {
  const empty: LargestHistory = { workflowId: '', runId: '', events: 0, bytes: 0 };
  let byEvents = empty;
  let byBytes = empty;
  const consider = (candidate: LargestHistory) => {
    totalEvents += candidate.events;
    if (candidate.events > byEvents.events) byEvents = candidate;
    if (candidate.bytes > byBytes.bytes) byBytes = candidate;
  };
  let next = 0;
  let inspected = 0;
  let totalEvents = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < trajectoryIds.length) {
      const id = trajectoryIds[next++]!;
      consider(historyOf(await client.workflow.getHandle(id).describe()));
      inspected++;
    }
  }));
  const continuations = new Map<string, number>();
  for await (const run of client.workflow.list({ query: 'WorkflowType = "trajectory" AND ExecutionStatus = "ContinuedAsNew"' })) {
    consider(historyOf(run));
    continuations.set(run.workflowId, (continuations.get(run.workflowId) ?? 0) + 1);
    inspected++;
  }
  return {
    method: 'describe() of every trajectory\'s current run, plus visibility of every run closed by continue-as-new',
    runsInspected: inspected,
    totalEvents,
    largestByEvents: byEvents,
    largestByBytes: byBytes,
    continuedAsNew: [...continuations.values()].reduce((a, b) => a + b, 0),
    mostContinuationsOfOne: Math.max(0, ...continuations.values()),
  };
}

function historyOf(run: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'historyLength' | 'historySize'>): LargestHistory {
  return { workflowId: run.workflowId, runId: run.runId, events: run.historyLength, bytes: run.historySize ?? 0 };
}

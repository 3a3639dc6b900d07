import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type pg from 'pg';
import { failedResult } from '../../src/client/run-rollouts.js';

/** How the stored trajectories of a run ended; failed ones by failure type when the table has the column. */
export async function outcomes(
  pool: pg.Pool,
  runId: string,
): Promise<{
  completed: number;
  failed: number;
  failedByType: Record<string, number>;
  failedIds: Set<string>;
  extraRows: number;
  /** Each row's outcome as `statusAudit` compares it: `completed`, or `failed <type>/<class>`. */
  byId: Map<string, string>;
}> {
  const {
    rows: [column],
  } = await pool.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'trajectories' AND column_name = 'failure_type'");
  const typeExpression = column ? "coalesce(failure_type, 'untyped')" : "'untyped'";
  const classExpression = column ? "coalesce(failure_class, 'unclassed')" : "'unclassed'";
  const { rows } = await pool.query<{ trajectory_id: string; status: string; failure_type: string; failure_class: string }>(
    `SELECT trajectory_id, status, ${typeExpression} AS failure_type, ${classExpression} AS failure_class FROM trajectories WHERE trajectory_id LIKE $1`,
    [`${runId}/%`],
  );
  // trajectory_id is the primary key today; counted anyway, since "exactly one row per trajectory" is the claim.
  const {
    rows: [rowCount],
  } = await pool.query<{ extra: string }>('SELECT count(*) - count(DISTINCT trajectory_id) AS extra FROM trajectories WHERE trajectory_id LIKE $1', [
    `${runId}/%`,
  ]);
  const failedByType: Record<string, number> = {};
  const failedIds = new Set<string>();
  const byId = new Map<string, string>();
  let completed = 0;
  for (const row of rows) {
    byId.set(row.trajectory_id, outcome(row.status, row.failure_type, row.failure_class));
    if (row.status === 'completed') completed++;
    else {
      failedIds.add(row.trajectory_id);
      failedByType[row.failure_type] = (failedByType[row.failure_type] ?? 0) + 1;
    }
  }
  return { completed, failed: failedIds.size, failedByType, failedIds, extraRows: Number(rowCount!.extra), byId };
}

export interface StatusAudit {
  /** Current runs by Temporal's status, e.g. `{ COMPLETED: 9990, FAILED: 10 }`. */
  temporal: Record<string, number>;
  /** Trajectories whose workflow and row do not say the same: completed in one and not the other, or other failures. */
  disagreements: number;
  examples: string[];
}

/**
 * Temporal's status of every trajectory against its row: a workflow completed exactly when its row is, and failed
 * with the type and class its row has (the workflow's failure details). A workflow still open with no row is no
 * disagreement: it is counted as lost.
 */
export async function statusAudit(
  client: Client,
  statuses: ReadonlyMap<string, string>,
  rows: ReadonlyMap<string, string>,
  concurrency = 32,
): Promise<StatusAudit> {
  const audit: StatusAudit = { temporal: {}, disagreements: 0, examples: [] };
  const ids = [...statuses.keys()];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const status = statuses.get(id)!;
        audit.temporal[status] = (audit.temporal[status] ?? 0) + 1;
        const row = rows.get(id) ?? 'no row';
        const told =
          status === 'COMPLETED' ? 'completed' : status === 'FAILED' ? await failureOfWorkflow(client, id) : row === 'no row' ? row : status;
        if (told === row) continue;
        audit.disagreements++;
        if (audit.examples.length < 5) audit.examples.push(`${id}: Temporal ${told}, row ${row}`);
      }
    }),
  );
  return audit;
}

/** A failed workflow's type and class, from its failure details, as the client reads them. */
async function failureOfWorkflow(client: Client, workflowId: string): Promise<string> {
  try {
    await client.workflow.getHandle(workflowId).result();
    return 'completed';
  } catch (error) {
    const result = failedResult({ trajectoryId: workflowId, qid: '', problem: '', gold: [] }, error);
    return outcome('failed', result.failureType ?? 'untyped', result.failureClass ?? 'unclassed');
  }
}

function outcome(status: string, failureType: string, failureClass: string): string {
  return status === 'completed' ? status : `${status} ${failureType}/${failureClass}`;
}

/** Rows left in the tables that should drain as trajectories finish and batches are acknowledged. */
export async function workingTableRows(pool: pg.Pool): Promise<Record<string, number | null>> {
  const count = async (table: string, where = '') => {
    const {
      rows: [exists],
    } = await pool.query<{ name: string | null }>('SELECT to_regclass($1) AS name', [table]);
    if (!exists?.name) return null; // not in this schema (yet)
    const {
      rows: [row],
    } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} ${where}`);
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
  /** Each trajectory's current run's status (`COMPLETED`, `FAILED`, `RUNNING`…), for `statusAudit`. */
  statuses: Map<string, string>;
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
  const statuses = new Map<string, string>();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < trajectoryIds.length) {
        const id = trajectoryIds[next++]!;
        const run = await client.workflow.getHandle(id).describe();
        statuses.set(id, run.status.name);
        consider(historyOf(run));
        inspected++;
      }
    }),
  );
  const continuations = new Map<string, number>();
  for await (const run of client.workflow.list({ query: 'WorkflowType = "trajectory" AND ExecutionStatus = "ContinuedAsNew"' })) {
    consider(historyOf(run));
    continuations.set(run.workflowId, (continuations.get(run.workflowId) ?? 0) + 1);
    inspected++;
  }
  return {
    method: "describe() of every trajectory's current run, plus visibility of every run closed by continue-as-new",
    runsInspected: inspected,
    totalEvents,
    largestByEvents: byEvents,
    largestByBytes: byBytes,
    continuedAsNew: [...continuations.values()].reduce((a, b) => a + b, 0),
    mostContinuationsOfOne: Math.max(0, ...continuations.values()),
    statuses,
  };
}

function historyOf(run: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'historyLength' | 'historySize'>): LargestHistory {
  return { workflowId: run.workflowId, runId: run.runId, events: run.historyLength, bytes: run.historySize ?? 0 };
}

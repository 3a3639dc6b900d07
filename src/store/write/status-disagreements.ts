import type pg from 'pg';
import type { RowStatus } from '../../trajectory/status-agreement.js';
import { storableText } from '../storable-text.js';

/** A closed workflow whose status its trajectory's row contradicts, as the sweep found it. */
export interface StatusDisagreement {
  trajectoryId: string;
  /** The workflow run compared: a disagreement is recorded once per run. */
  workflowRunId: string;
  kind: string;
  /** As visibility spells it: Completed, Failed, Canceled, Terminated, TimedOut. */
  temporalStatus: string;
  rowStatus: RowStatus | null;
}

export interface RecordedDisagreement extends StatusDisagreement {
  detectedAt: Date;
}

/** Records disagreements not recorded before, in one statement; returns those that are new. */
export async function recordDisagreements(pool: pg.Pool, disagreements: readonly StatusDisagreement[]): Promise<StatusDisagreement[]> {
  if (disagreements.length === 0) return [];
  const { rows } = await pool.query<{ trajectory_id: string; workflow_run_id: string }>(
    `INSERT INTO status_disagreements (trajectory_id, workflow_run_id, kind, temporal_status, row_status)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
     ON CONFLICT DO NOTHING RETURNING trajectory_id, workflow_run_id`,
    [
      disagreements.map((d) => storableText(d.trajectoryId)),
      disagreements.map((d) => d.workflowRunId),
      disagreements.map((d) => d.kind),
      disagreements.map((d) => d.temporalStatus),
      disagreements.map((d) => d.rowStatus),
    ],
  );
  const inserted = new Set(rows.map((row) => `${row.workflow_run_id} ${row.trajectory_id}`));
  return disagreements.filter((d) => inserted.has(`${d.workflowRunId} ${storableText(d.trajectoryId)}`));
}

/** The disagreements recorded for one trajectory, oldest first. */
export async function recordedDisagreements(pool: pg.Pool, trajectoryId: string): Promise<RecordedDisagreement[]> {
  const { rows } = await pool.query(
    `SELECT trajectory_id, workflow_run_id, kind, temporal_status, row_status, detected_at FROM status_disagreements
     WHERE trajectory_id = $1 ORDER BY detected_at, workflow_run_id`,
    [storableText(trajectoryId)],
  );
  return rows.map(recorded);
}

/** How many disagreements were recorded for a run's trajectories (ids `<runId>/…`), and the first few, newest first. */
export async function runDisagreements(pool: pg.Pool, runId: string, named = 20): Promise<{ count: number; latest: RecordedDisagreement[] }> {
  const { rows } = await pool.query(
    `SELECT trajectory_id, workflow_run_id, kind, temporal_status, row_status, detected_at, count(*) OVER ()::int AS n FROM status_disagreements
     WHERE starts_with(trajectory_id, $1) ORDER BY detected_at DESC, trajectory_id LIMIT $2`,
    [`${runId}/`, named],
  );
  return { count: rows[0]?.n ?? 0, latest: rows.map(recorded) };
}

function recorded(row: Record<string, any>): RecordedDisagreement {
  return {
    trajectoryId: row.trajectory_id,
    workflowRunId: row.workflow_run_id,
    kind: row.kind,
    temporalStatus: row.temporal_status,
    rowStatus: row.row_status,
    detectedAt: row.detected_at,
  };
}

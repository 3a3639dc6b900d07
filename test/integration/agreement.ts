import type { Client } from '@temporalio/client';
import { failedResult } from '../../src/client/run-rollouts.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import type { TrajectoryResult } from '../../src/workflows/trajectory-state.js';

/**
 * How a set of trajectories ended, as each place that records it tells it. They must agree, every trajectory
 * exactly once: Temporal's own status, the results a waiting client gets, and the rows in Postgres.
 */
export interface Agreement {
  trajectories: number;
  /** Workflows by the status Temporal reports for them (describe), e.g. `{ COMPLETED: 40 }`. */
  temporal: Record<string, number>;
  /** Results as the client got them: `completed`, or `failed <type>/<class>`. */
  results: Record<string, number>;
  /** Rows by the same outcome; `missing` counts trajectories without a row, `extra` rows of no submitted trajectory. */
  rows: Record<string, number>;
  /** One line per trajectory the three do not tell alike, e.g. `a/1/0: temporal failed ContextMismatch/data, row completed`. */
  disagreements: string[];
}

/** What a clean run of `n` trajectories looks like: every one completed, everywhere, once. */
export function allCompleted(n: number): Agreement {
  return { trajectories: n, temporal: { COMPLETED: n }, results: { completed: n }, rows: { completed: n }, disagreements: [] };
}

/**
 * Reads every trajectory's status from Temporal, its result (`results` when the caller waited through
 * `RolloutClient`, else the workflow's own result) and the rows stored under `prefix`.
 */
export async function agreementOf(
  client: Client,
  trajectoryIds: readonly string[],
  rows: readonly ExportedTrajectory[],
  results?: readonly TrajectoryResult[],
): Promise<Agreement> {
  const agreement: Agreement = { trajectories: trajectoryIds.length, temporal: {}, results: {}, rows: {}, disagreements: [] };
  const count = (counts: Record<string, number>, key: string) => {
    counts[key] = (counts[key] ?? 0) + 1;
  };
  const rowOf = new Map(rows.map((row) => [row.trajectory_id, row]));
  const resultOf = new Map(results?.map((result) => [result.trajectoryId, result]));
  const submitted = new Set(trajectoryIds);
  for (const row of rows) if (!submitted.has(row.trajectory_id)) count(agreement.rows, 'extra');
  if (rows.length !== rowOf.size) agreement.rows.extra = (agreement.rows.extra ?? 0) + rows.length - rowOf.size;

  await Promise.all(
    trajectoryIds.map(async (id) => {
      const handle = client.workflow.getHandle(id);
      const { status } = await handle.describe();
      // Temporal's word on a failure is the workflow's failure details; the client's result is read apart from it.
      const own =
        status.name === 'RUNNING'
          ? undefined
          : await handle.result().then(
              (result: TrajectoryResult) => result,
              (error: unknown) => failedResult({ trajectoryId: id, qid: '', problem: '', gold: [] }, error),
            );
      const result: Pick<TrajectoryResult, 'failureType' | 'failureClass'> & { status: string } = resultOf.get(id) ?? own ?? { status: 'running' };
      const row = rowOf.get(id);
      count(agreement.temporal, status.name);
      count(agreement.results, outcome(result.status, result.failureType, result.failureClass));
      count(agreement.rows, row ? outcome(row.status, row.failure_type, row.failure_class) : 'missing');
      const told = {
        temporal:
          status.name === 'COMPLETED' ? 'completed' : status.name === 'FAILED' ? outcome('failed', own?.failureType, own?.failureClass) : status.name,
        result: outcome(result.status, result.failureType, result.failureClass),
        row: row ? outcome(row.status, row.failure_type, row.failure_class) : 'no row',
      };
      if (told.temporal !== told.result || told.result !== told.row) {
        agreement.disagreements.push(
          `${id}: ${Object.entries(told)
            .map(([where, what]) => `${where} ${what}`)
            .join(', ')}`,
        );
      }
    }),
  );
  agreement.disagreements.sort();
  return agreement;
}

function outcome(status: string, failureType?: string, failureClass?: string): string {
  if (status === 'completed' || status === 'running') return status;
  return `${status} ${failureType ?? 'untyped'}/${failureClass ?? 'unclassed'}`;
}

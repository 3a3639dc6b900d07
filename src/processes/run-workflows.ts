import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type pg from 'pg';
import { workflowStatusName, type RowStatus } from '../trajectory/status-agreement.js';
import { disagreeingWorkflows } from './row-comparison.js';
import { workflowPages } from './workflow-pages.js';

const STATUSES = ['Running', 'Completed', 'Failed', 'Terminated', 'TimedOut', 'Canceled'] as const;
/** How many disagreeing trajectories are named: enough to start looking, bounded for a large run. */
const NAMED = 20;

/** What Temporal says of a run's trajectory workflows, beside Postgres's counters; or why it could not say. */
export type TemporalRunStatus =
  | {
      reachable: true;
      /** The run's trajectory workflows by execution status (a continued-as-new chain counts once, as its last run). */
      workflows: Record<(typeof STATUSES)[number], number> & Record<string, number>;
      /** Closed workflows whose row says otherwise (see statusAgreement), and the first few of them. */
      disagreements: number;
      disagreeing: { trajectoryId: string; temporal: string; row: RowStatus | null }[];
    }
  | { reachable: false; error: string };

/** Lists a run's trajectory workflows (ids `<runId>/…`) and compares each closed one with its row, a page at a time. */
export async function temporalRunStatus(pool: pg.Pool, temporal: Client, runId: string): Promise<TemporalRunStatus> {
  const workflows: Record<string, number> = Object.fromEntries(STATUSES.map((status) => [status, 0]));
  const disagreeing: { trajectoryId: string; temporal: string; row: RowStatus | null }[] = [];
  let disagreements = 0;
  const pages = workflowPages(
    temporal,
    `WorkflowType = 'trajectory' AND ExecutionStatus != 'ContinuedAsNew' AND WorkflowId STARTS_WITH ${quoted(`${runId}/`)}`,
  );
  for (;;) {
    let next: IteratorResult<WorkflowExecutionInfo[]>;
    try {
      next = await pages.next();
    } catch (error) {
      // Temporal failing is reported, not thrown: the run's Postgres counters still stand. Postgres failing throws.
      return { reachable: false, error: (error as Error).message };
    }
    if (next.done) break;
    for (const execution of next.value) {
      const status = workflowStatusName(execution.status.name);
      workflows[status] = (workflows[status] ?? 0) + 1;
    }
    const found = await disagreeingWorkflows(pool, next.value);
    disagreements += found.length;
    disagreeing.push(
      ...found.slice(0, NAMED - disagreeing.length).map((d) => ({ trajectoryId: d.trajectoryId, temporal: d.temporalStatus, row: d.rowStatus })),
    );
  }
  return { reachable: true, workflows: workflows as Record<(typeof STATUSES)[number], number>, disagreements, disagreeing };
}

/** A visibility query's string literal. */
function quoted(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

import type { WorkflowExecutionInfo } from '@temporalio/client';
import type pg from 'pg';
import type { StatusDisagreement } from '../store/write/status-disagreements.js';
import { storedStatuses } from '../store/read/trajectory-statuses.js';
import { statusAgreement, workflowStatusName } from '../trajectory/status-agreement.js';

/** The workflows of a page whose rows contradict them: one query reads every row of the page. */
export async function disagreeingWorkflows(pool: pg.Pool, executions: readonly WorkflowExecutionInfo[]): Promise<StatusDisagreement[]> {
  const rows = await storedStatuses(
    pool,
    executions.map((execution) => execution.workflowId),
  );
  return executions.flatMap((execution) => {
    const temporalStatus = workflowStatusName(execution.status.name);
    const rowStatus = rows.get(execution.workflowId) ?? null;
    const agreement = statusAgreement(rowStatus, temporalStatus);
    return agreement.verdict === 'disagree'
      ? [{ trajectoryId: execution.workflowId, workflowRunId: execution.runId, kind: agreement.kind, temporalStatus, rowStatus }]
      : [];
  });
}

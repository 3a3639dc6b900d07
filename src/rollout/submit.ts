import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { Problem } from '../datasets/index.js';
import type { RolloutOptions } from '../trajectory/options.js';
import { validateTrajectoryRequest, type TrajectoryRequest } from '../trajectory/request.js';
import { CPU_TASK_QUEUE } from '../task-queues.js';
import type { trajectory } from '../workflows/index.js';
import { QID, STATUS } from '../workflows/search-attributes.js';

/** The trajectory id (and workflow id) of one sample: stable, so resubmitting the same run is a no-op. */
export function trajectoryId(runName: string, qid: string, sample: number): string {
  return `${runName}/${qid}/${sample}`;
}

/**
 * The requests of a run, `samples` per problem, each validated: a bad one throws `InvalidTrajectoryRequest`
 * here, before the first of them is started.
 */
export function trajectoryRequests(runName: string, problems: readonly Problem[], samples: number, options: Partial<RolloutOptions>): TrajectoryRequest[] {
  return problems.flatMap((problem) => Array.from({ length: samples }, (_, sample) => validateTrajectoryRequest({
    trajectoryId: trajectoryId(runName, problem.qid, sample),
    qid: problem.qid,
    ...(problem.taskId === undefined ? {} : { taskId: problem.taskId }),
    problem: problem.problem,
    gold: problem.gold,
    ...(problem.code ? { code: problem.code } : {}),
    options,
  })));
}

/**
 * Starts one trajectory workflow. A second submission of the same trajectory id — running or finished — gets
 * the existing workflow back instead of a second run, so it can never produce a second result. An invalid
 * request throws `InvalidTrajectoryRequest` before Temporal is called.
 */
export async function submitTrajectory(client: Client, input: TrajectoryRequest): Promise<{ handle: WorkflowHandle<typeof trajectory>; duplicate: boolean }> {
  const request = validateTrajectoryRequest(input);
  try {
    const handle = await client.workflow.start<typeof trajectory>('trajectory', {
      taskQueue: CPU_TASK_QUEUE,
      workflowId: request.trajectoryId,
      args: [request],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      // FAIL (not USE_EXISTING) so that a resubmission while the first is running is reported as a duplicate too.
      workflowIdConflictPolicy: 'FAIL',
      // Set here so the workflow need not upsert them (a history event and a visibility write saved per trajectory).
      typedSearchAttributes: [{ key: QID, value: request.qid }, { key: STATUS, value: request.group ? 'queued' : 'running' }],
      staticSummary: `${request.qid}: ${request.problem.slice(0, 120)}`,
    });
    return { handle, duplicate: false };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return { handle: client.workflow.getHandle<typeof trajectory>(request.trajectoryId), duplicate: true };
  }
}

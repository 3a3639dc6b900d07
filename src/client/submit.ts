import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { GroupMembership } from '../admission/group-membership.js';
import type { Problem } from '../datasets/index.js';
import type { RolloutOptions } from '../trajectory/options.js';
import { validateTrajectoryRequest, type TrajectoryRequest } from '../trajectory/request.js';
import { CPU_TASK_QUEUE } from '../task-queues.js';
import type { trajectory } from '../workflows/index.js';
import { QID, STATUS } from '../temporal/search-attributes.js';

/** The trajectory id (and workflow id) of one sample: stable, so resubmitting the same run is a no-op. */
export function trajectoryId(runName: string, qid: string, sample: number): string {
  return `${runName}/${qid}/${sample}`;
}

/** Where one sample of a problem goes and how it runs: everything of its request that is not the problem's. */
export interface RequestPlacement {
  trajectoryId: string;
  options?: Partial<RolloutOptions>;
  /** The training-run group it is a member of; without one the trajectory starts at once. */
  group?: GroupMembership;
  timeouts?: TrajectoryRequest['timeouts'];
}

/**
 * The request of one sample of a problem, validated: every submit path (the client's groups, `ratchet run`'s
 * samples) builds its requests here, so a bad one throws `InvalidTrajectoryRequest` before anything is started.
 */
export function trajectoryRequest(problem: Problem, placement: RequestPlacement): TrajectoryRequest {
  return validateTrajectoryRequest({
    trajectoryId: placement.trajectoryId,
    qid: problem.qid,
    ...(problem.taskId === undefined ? {} : { taskId: problem.taskId }),
    problem: problem.problem,
    gold: problem.gold,
    ...(problem.code ? { code: problem.code } : {}),
    ...(problem.environment === undefined ? {} : { environment: problem.environment }),
    ...(problem.environmentArgs === undefined ? {} : { environmentArgs: problem.environmentArgs }),
    ...(placement.options ? { options: placement.options } : {}),
    ...(placement.group ? { group: placement.group } : {}),
    ...(placement.timeouts ? { timeouts: placement.timeouts } : {}),
  });
}

/** The requests of a run without groups, `samples` per problem: all built, so all valid, before the first starts. */
export function trajectoryRequests(
  runName: string,
  problems: readonly Problem[],
  samples: number,
  options: Partial<RolloutOptions>,
): TrajectoryRequest[] {
  return problems.flatMap((problem) =>
    Array.from({ length: samples }, (_, sample) =>
      trajectoryRequest(problem, {
        trajectoryId: trajectoryId(runName, problem.qid, sample),
        options,
      }),
    ),
  );
}

/**
 * Starts one trajectory workflow. A second submission of the same trajectory id — running or finished — gets
 * the existing workflow back instead of a second run, so it can never produce a second result. An invalid
 * request throws `InvalidTrajectoryRequest` before Temporal is called.
 */
export async function submitTrajectory(
  client: Client,
  input: TrajectoryRequest,
): Promise<{ handle: WorkflowHandle<typeof trajectory>; duplicate: boolean }> {
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
      typedSearchAttributes: [
        { key: QID, value: request.qid },
        { key: STATUS, value: request.group ? 'queued' : 'running' },
      ],
      staticSummary: `${request.qid}: ${request.problem.slice(0, 120)}`,
    });
    return { handle, duplicate: false };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    return { handle: client.workflow.getHandle<typeof trajectory>(request.trajectoryId), duplicate: true };
  }
}

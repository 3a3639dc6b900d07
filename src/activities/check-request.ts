import { environmentNameOf, environmentSeed, environmentTaskQueue, type EnvironmentSet } from '../environments/environment-set.js';
import { resolveRolloutOptions, type RolloutOptions } from '../trajectory/options.js';
import { validateTrajectoryRequest } from '../trajectory/request.js';
import { resolveTrajectoryTimeouts, type ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';

export interface CheckRequestInput {
  request: unknown;
  workflowId: string;
}

/** Where the episode's environment runs: in the CPU worker, or on its own worker's task queue. */
export interface EnvironmentPlacement {
  name: string;
  /** Absent: a CPU worker runs it in-process (a built-in one, or one the worker was given). */
  taskQueue?: string;
  /** The episode's seed (from the trajectory id), for an environment on its own worker. */
  seed: number;
}

export type CheckedRequest = { options: RolloutOptions; timeouts: ResolvedTrajectoryTimeouts; page?: string; environment?: EnvironmentPlacement } | { invalid: string };

/**
 * Checks a trajectory request against its schema and resolves its options and timeouts. The workflow runs it as
 * a local activity, so that the schema library (zod) stays out of the workflow bundle: a module the workflow
 * imports is set up again for every workflow execution, and zod's set-up cost more CPU than a whole turn.
 * An invalid request is an answer, not an error: the workflow records it as a failed trajectory.
 */
export function checkRequestActivity(uiUrl: string | undefined, environments: EnvironmentSet) {
  return async function checkRequest(input: CheckRequestInput): Promise<CheckedRequest> {
    return checkedRequest(input, uiUrl, environments);
  };
}

function checkedRequest(input: CheckRequestInput, uiUrl: string | undefined, environments: EnvironmentSet): CheckedRequest {
  try {
    const request = validateTrajectoryRequest(input.request);
    // Rows, groups and the controller's signals all find a trajectory by its id: it must be the workflow's.
    if (request.trajectoryId !== input.workflowId) {
      throw new Error(`trajectoryId: "${request.trajectoryId}" must equal the workflow id "${input.workflowId}"`);
    }
    // The trajectory's page in `ratchet ui`, for the workflow's details: a link however the workflow was started.
    const page = uiUrl ? `${uiUrl.replace(/\/+$/, '')}/trajectories/${encodeURIComponent(request.trajectoryId)}` : undefined;
    const name = environmentNameOf(request);
    const seed = environmentSeed(request.trajectoryId);
    const environment = environments.get(name) ? { name, seed } : { name, taskQueue: environmentTaskQueue(name), seed };
    return { options: resolveRolloutOptions(request.options), timeouts: resolveTrajectoryTimeouts(request.timeouts), ...(page ? { page } : {}), environment };
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}

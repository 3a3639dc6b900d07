import { resolveRolloutOptions, type RolloutOptions } from '../trajectory/options.js';
import { validateTrajectoryRequest } from '../trajectory/request.js';
import { resolveTrajectoryTimeouts, type ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';

export interface CheckRequestInput {
  request: unknown;
  workflowId: string;
}

export type CheckedRequest = { options: RolloutOptions; timeouts: ResolvedTrajectoryTimeouts; page?: string } | { invalid: string };

/**
 * Checks a trajectory request against its schema and resolves its options and timeouts. The workflow runs it as
 * a local activity, so that the schema library (zod) stays out of the workflow bundle: a module the workflow
 * imports is set up again for every workflow execution, and zod's set-up cost more CPU than a whole turn.
 * An invalid request is an answer, not an error: the workflow records it as a failed trajectory.
 */
export function checkRequestActivity(uiUrl: string | undefined) {
  return async function checkRequest(input: CheckRequestInput): Promise<CheckedRequest> {
    return checkedRequest(input, uiUrl);
  };
}

function checkedRequest(input: CheckRequestInput, uiUrl: string | undefined): CheckedRequest {
  try {
    const request = validateTrajectoryRequest(input.request);
    // Rows, groups and the controller's signals all find a trajectory by its id: it must be the workflow's.
    if (request.trajectoryId !== input.workflowId) {
      throw new Error(`trajectoryId: "${request.trajectoryId}" must equal the workflow id "${input.workflowId}"`);
    }
    // The trajectory's page in `ratchet ui`, for the workflow's details: a link however the workflow was started.
    const page = uiUrl ? `${uiUrl.replace(/\/+$/, '')}/trajectories/${encodeURIComponent(request.trajectoryId)}` : undefined;
    return { options: resolveRolloutOptions(request.options), timeouts: resolveTrajectoryTimeouts(request.timeouts), ...(page ? { page } : {}) };
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}

import { Context } from '@temporalio/activity';
import type { AgentProgram } from '../agent/program-host.js';
import { activityQueuePolled } from '../temporal/task-queue-pollers.js';
import {
  environmentNameOf,
  environmentSeed,
  environmentTaskQueue,
  unknownEnvironment,
  type EnvironmentSet,
} from '../environments/environment-set.js';
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
  /** Its steps run code (or anything slow): they get the sandbox's deadline (release 6 reads it; release 5 went by the name). */
  slowSteps?: boolean;
  /** An agent program the CPU workers run (release 8): its model calls are the turns (src/workflows/agent-episode.ts). */
  agentProgram?: boolean;
  /** The agent program is a workflow of the user's, started as the trajectory's child (absent: a process). */
  agentWorkflow?: { workflowType: string; taskQueue: string };
  /**
   * No CPU worker runs it and no worker has ever polled its task queue (Temporal keeps pollers of the last minutes):
   * why, for the trajectory's `UnknownEnvironment` failure. Release 6 fails at once on it; release 5 waited.
   */
  unserved?: string;
}

export type CheckedRequest =
  { options: RolloutOptions; timeouts: ResolvedTrajectoryTimeouts; page?: string; environment?: EnvironmentPlacement } | { invalid: string };

/**
 * Checks a trajectory request against its schema and resolves its options and timeouts. The workflow runs it as
 * a local activity, so that the schema library (zod) stays out of the workflow bundle: a module the workflow
 * imports is set up again for every workflow execution, and zod's set-up cost more CPU than a whole turn.
 * An invalid request is an answer, not an error: the workflow records it as a failed trajectory.
 */
export function checkRequestActivity(
  uiUrl: string | undefined,
  environments: EnvironmentSet,
  agentPrograms: ReadonlyMap<string, AgentProgram> = new Map(),
) {
  return async function checkRequest(input: CheckRequestInput): Promise<CheckedRequest> {
    const checked = checkedRequest(input, uiUrl, environments, agentPrograms);
    if ('invalid' in checked || checked.environment?.taskQueue === undefined) return checked;
    const unserved = await unservedReason(checked.environment.name, checked.environment.taskQueue, environments);
    return unserved === undefined ? checked : { ...checked, environment: { ...checked.environment, unserved } };
  };
}

/**
 * Why nothing will ever take this environment's steps, or undefined when a worker polls (or recently polled) its
 * task queue. A restarting worker still counts: Temporal lists pollers seen in the last minutes. When Temporal
 * cannot be asked (no client in a test's activity environment), the environment counts as served.
 */
async function unservedReason(name: string, taskQueue: string, environments: EnvironmentSet): Promise<string | undefined> {
  let context: Context;
  try {
    context = Context.current();
    if (!context.client) return undefined;
  } catch {
    return undefined;
  }
  const polled = await activityQueuePolled(context.client, taskQueue, context.info.workflowNamespace);
  return polled ? undefined : unknownEnvironment(name, environments).message;
}

function checkedRequest(
  input: CheckRequestInput,
  uiUrl: string | undefined,
  environments: EnvironmentSet,
  agentPrograms: ReadonlyMap<string, AgentProgram>,
): CheckedRequest {
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
    const local = environments.get(name);
    const program = agentPrograms.get(name);
    const environment = program
      ? {
          name,
          seed,
          agentProgram: true,
          ...('workflow' in program ? { agentWorkflow: { workflowType: program.workflow, taskQueue: program.taskQueue } } : {}),
        }
      : local
        ? { name, seed, ...(local.slowSteps ? { slowSteps: true } : {}) }
        : { name, taskQueue: environmentTaskQueue(name), seed };
    return {
      options: resolveRolloutOptions(request.options),
      timeouts: resolveTrajectoryTimeouts(request.timeouts),
      ...(page ? { page } : {}),
      environment,
    };
  } catch (error) {
    return { invalid: (error as Error).message };
  }
}

import { ApplicationFailure, ChildWorkflowFailure, executeChild, proxyActivities, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import type { CpuActivities } from '../activities/index.js';
import type { AgentProgramRun, RunAgentProgramInput } from '../activities/agent-program.js';
import type { EnvironmentPlacement } from '../activities/check-request.js';
import { AGENT_MODEL, type AgentTask, type AgentWorkflowInput } from '../agent/program-host.js';
import type { ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';
import { FailureType } from '../trajectory/failure.js';
import { AGENT_PROGRAM_ATTEMPTS, Presets } from './activity-presets.js';

/** The runs of an agent program until one returns: a process's (an activity) or an agent workflow's (children). */
export type AgentProgramRuns = (input: RunAgentProgramInput) => Promise<AgentProgramRun>;

/** An agent workflow's child id for run `attempt`: the trajectory's own, so a replay starts the same child. */
export function agentWorkflowId(trajectoryId: string, attempt: number): string {
  return `${trajectoryId}/agent-run-${attempt}`;
}

/**
 * The runs of an agent that is a Temporal workflow of the user's (release 8): each run opens the trajectory's endpoint
 * on a CPU worker (a base URL and a key naming the run), then starts the workflow as the trajectory's child with them,
 * and its return value is the run's result. A child that fails or runs past `agentProgramSeconds` is run again, as a
 * process is, with a new endpoint run (its calls answered from the store), up to `AGENT_PROGRAM_ATTEMPTS` runs.
 */
export function agentWorkflowRuns(
  workflow: NonNullable<EnvironmentPlacement['agentWorkflow']>,
  timeouts: ResolvedTrajectoryTimeouts,
): AgentProgramRuns {
  const endpoints = proxyActivities<CpuActivities>(Presets.agentEndpoint);
  const results = proxyLocalActivities<CpuActivities>(Presets.cpuStep);
  const options = Presets.agentWorkflow(timeouts, workflow.taskQueue);
  return async ({ trajectoryId, qid, problem, args, seed, program, terms, seconds }) => {
    let failure: ChildWorkflowFailure | undefined;
    for (let attempt = 1; attempt <= AGENT_PROGRAM_ATTEMPTS; attempt += 1) {
      const endpoint = await endpoints.openAgentEndpoint({ trajectoryId, program, terms, attempt, seconds });
      const task: AgentTask = { trajectoryId, qid, problem, args, seed, attempt };
      const input: AgentWorkflowInput = { ...endpoint, model: AGENT_MODEL, task };
      let returned: unknown;
      try {
        returned = await executeChild(workflow.workflowType, { ...options, workflowId: agentWorkflowId(trajectoryId, attempt), args: [input] });
      } catch (error) {
        if (!(error instanceof ChildWorkflowFailure)) throw error;
        failure = error;
        continue;
      }
      const what = `agent workflow ${workflow.workflowType} (run ${attempt}) for ${trajectoryId}`;
      return { result: await results.checkAgentResult({ what, returned }), attempt };
    }
    throw ApplicationFailure.create({
      message: `agent workflow ${workflow.workflowType} for ${trajectoryId} failed on all ${AGENT_PROGRAM_ATTEMPTS} runs; the last ${howItFailed(failure!, seconds)}`,
      type: FailureType.AgentProgramFailed,
      nonRetryable: true,
      cause: failure,
    });
  };
}

/** How a child run ended, in words, with its own failure's message (the user's error, or the deadline). */
function howItFailed(failure: ChildWorkflowFailure, seconds: number): string {
  const { cause } = failure;
  if (cause instanceof TimeoutFailure) return `ran past its ${seconds} s (agentProgramSeconds)`;
  const inner = cause?.cause instanceof Error ? ` (${cause.cause.message})` : '';
  return `failed: ${cause?.message ?? failure.message}${inner}`;
}

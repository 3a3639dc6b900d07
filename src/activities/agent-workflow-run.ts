import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CallTerms } from '../agent/chat-completion-request.js';
import { AGENT_MODEL, type AgentProgramHost } from '../agent/program-host.js';
import { checkProgramResult, RESULT_LIMIT_BYTES, type AgentProgramResult } from '../agent/program-result.js';
import { workflowQueuePolled } from '../temporal/task-queue-pollers.js';
import { FailureType } from '../trajectory/failure.js';

export interface OpenAgentEndpointInput {
  trajectoryId: string;
  /** The agent workflow, by the name the workers registered it under. */
  program: string;
  terms: CallTerms;
  /** The run (from 1): its key names it, and its calls are counted from 0. */
  attempt: number;
  /** The run's deadline (agentProgramSeconds): the endpoint closes the run a minute after it. */
  seconds: number;
}

/** How long an agent workflow's run stays open past its deadline: its last call may still be answered meanwhile. */
const CLOSE_MARGIN_SECONDS = 60;

/**
 * Opens one run of an agent workflow on this CPU worker's endpoint: the base URL and key the child workflow's model
 * calls are made with. No activity waits for the child here, so the run closes itself after its deadline; if this
 * worker goes first, the child's calls fail to connect and the run fails (docs/agent-programs.md, "Durability").
 */
export function openAgentEndpointActivity(host: AgentProgramHost | undefined) {
  return async function openAgentEndpoint(input: OpenAgentEndpointInput): Promise<{ baseUrl: string; apiKey: string }> {
    const program = host?.program(input.program);
    if (!host || !program || !('workflow' in program)) {
      // A worker without it (registered on another): retried, so that a worker that has it can take it.
      throw ApplicationFailure.retryable(`this CPU worker has no agent workflow named ${input.program}`, FailureType.AgentProgramFailed);
    }
    // A child on a queue no worker polls would wait out agentProgramSeconds on each run (a typo in taskQueue, a worker
    // not started): refused here instead, after this activity's few retries (a worker starting meanwhile is found).
    const context = Context.current();
    if (!(await workflowQueuePolled(context.client, program.taskQueue, context.info.workflowNamespace))) {
      throw ApplicationFailure.retryable(
        `no worker polls task queue ${program.taskQueue} for agent workflow ${program.workflow} (${input.program}): is its worker running, and is taskQueue right?`,
        FailureType.AgentProgramFailed,
      );
    }
    const run = { ...input.terms, policy: AGENT_MODEL, attempt: input.attempt };
    return host.openRun(input.trajectoryId, run, (input.seconds + CLOSE_MARGIN_SECONDS) * 1000);
  };
}

/** An agent workflow's return value, checked by the rules of a process's result file (`AgentResultInvalid` otherwise). */
export async function checkAgentResult(input: { what: string; returned: unknown }): Promise<AgentProgramResult> {
  const text = JSON.stringify(input.returned ?? null);
  const size = Buffer.byteLength(text);
  if (size > RESULT_LIMIT_BYTES) {
    throw ApplicationFailure.nonRetryable(
      `${input.what} returned a result of ${size} bytes, over the ${RESULT_LIMIT_BYTES} a result may hold`,
      FailureType.AgentResultInvalid,
    );
  }
  const checked = checkProgramResult(text);
  if ('invalid' in checked) throw ApplicationFailure.nonRetryable(`${input.what}: ${checked.invalid}`, FailureType.AgentResultInvalid);
  return checked.result;
}

import { ActivityFailure, ApplicationFailure, condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { CpuActivities } from '../activities/index.js';
import type { AgentEpisodeEnd } from '../activities/agent-calls.js';
import type { AgentProgramRun } from '../activities/agent-program.js';
import { FailureType } from '../trajectory/failure.js';
import { samplingOf } from '../trajectory/sampling.js';
import { Presets } from './activity-presets.js';
import { AgentCallRefusal, agentCallUpdate } from './agent-call-update.js';
import { agentWorkflowRuns, type AgentProgramRuns } from './agent-workflow-runs.js';
import type { Episode, EpisodeInput } from './episode.js';

interface RecordedCall {
  requestHash: string;
  messageCount: number;
  maxTokens: number;
  /** Its turn is generated: every update waiting for it is answered. */
  answered: boolean;
  created?: number;
}

/**
 * An agent program's episode (release 8): the program runs beside the workflow, on a CPU worker (a process) or as its
 * child (an agent workflow on the user's worker), and each model call it makes is a turn. `start` runs the program and waits for its first call; `generate` is the call's turn on the GPU
 * queue (the trajectory's sampling, versions, affinity and staleness, as any turn); `step` answers the call, then waits
 * for the program's next call (the turn's feedback: its new messages, or a fork) or its end (the reward).
 *
 * A program run again (its process died, its worker was lost) counts its calls from 0 again: a call at an index
 * already recorded is answered from the store if it is the same request (by hash), and fails the trajectory typed
 * (`CallDiverged`) if not. A call made while its turn is still generating waits for the same turn: nothing is
 * generated twice.
 */
export function agentEpisode(input: EpisodeInput, generate: Episode['generate']): Episode {
  const { request, options, timeouts } = input;
  const cpu = proxyLocalActivities<CpuActivities>(Presets.cpuStep);
  const judge = proxyLocalActivities<CpuActivities>(Presets.sandboxStep);
  // The program's kind is chosen once, at the start: the loop below is the same for a process and a workflow.
  const placement = input.environment!;
  const runPrograms: AgentProgramRuns = placement.agentWorkflow
    ? agentWorkflowRuns(placement.agentWorkflow, timeouts)
    : proxyActivities<CpuActivities>(Presets.agentProgram(timeouts)).runAgentProgram;
  const calls: RecordedCall[] = [];
  let programEnd: AgentProgramRun | { error: unknown } | undefined;
  // How many calls each program run made (by its attempt): the run that returns must have made every recorded call.
  const callsByRun = new Map<number, number>();
  let refusal: ApplicationFailure | undefined;
  let turnLimit = false;
  let over = false;

  setHandler(agentCallUpdate, async (call) => {
    if (over) throw ApplicationFailure.nonRetryable(`the episode of ${request.trajectoryId} is over`, AgentCallRefusal.EpisodeOver);
    if (call.call >= options.turns) {
      turnLimit = true;
      throw ApplicationFailure.nonRetryable(
        `call ${call.call} is past the trajectory's ${options.turns} turns (rollout option turns): the episode ends here`,
        AgentCallRefusal.TurnLimit,
      );
    }
    const recorded = calls[call.call];
    if (recorded === undefined && call.call !== calls.length) {
      throw ApplicationFailure.nonRetryable(`call ${call.call} arrived, but the next call is ${calls.length}`, AgentCallRefusal.OutOfOrder);
    }
    if (recorded !== undefined && recorded.requestHash !== call.requestHash) {
      refusal ??= ApplicationFailure.nonRetryable(
        `call ${call.call} of run ${call.attempt} differs from the call recorded at that index (${recorded.messageCount} messages, ` +
          `request ${recorded.requestHash.slice(0, 12)}; now ${call.messageCount} messages, request ${call.requestHash.slice(0, 12)}): ` +
          'an agent program must make the same calls when it runs again',
        AgentCallRefusal.Diverged,
      );
      throw refusal;
    }
    callsByRun.set(call.attempt, Math.max(callsByRun.get(call.attempt) ?? 0, call.call + 1));
    if (recorded === undefined)
      calls.push({ requestHash: call.requestHash, messageCount: call.messageCount, maxTokens: call.maxTokens, answered: false });
    await condition(() => calls[call.call]!.answered || over);
    if (!calls[call.call]!.answered)
      throw ApplicationFailure.nonRetryable(`the episode of ${request.trajectoryId} is over`, AgentCallRefusal.EpisodeOver);
    return { turn: call.call, created: calls[call.call]!.created ?? 0 };
  });

  /** Waits for the program's call `index`, its end, a refused call or the turn limit. */
  const nextEvent = (index: number) => condition(() => calls.length > index || programEnd !== undefined || refusal !== undefined || turnLimit);

  /** The program's end as the episode's end, or its failure as the trajectory's. */
  const ended = (turn: number): AgentEpisodeEnd | undefined => {
    if (refusal) throw refusal;
    if (programEnd && 'error' in programEnd) throw programFailure(programEnd.error);
    if (programEnd) {
      const made = callsByRun.get(programEnd.attempt) ?? 0;
      // A run that returned without making every recorded call did not see every turn the trajectory holds.
      if (made !== calls.length) {
        throw ApplicationFailure.nonRetryable(
          `run ${programEnd.attempt} of the agent program returned after ${made} calls, but ${calls.length} are recorded: ` +
            'an agent program must make the same calls when it runs again',
          AgentCallRefusal.Diverged,
        );
      }
      return { kind: 'returned', result: programEnd.result };
    }
    if (calls.length > turn + 1) return undefined;
    return { kind: 'turn-limit', turns: options.turns };
  };

  return {
    start: async () => {
      const { trajectoryId, qid, problem } = request;
      const args = request.environmentArgs ?? null;
      const terms = { sampling: samplingOf(options), maxNewTokens: options.maxNewTokens };
      const run = { trajectoryId, qid, problem, args, seed: input.environment!.seed, program: input.environment!.name };
      runPrograms({ ...run, terms, seconds: timeouts.agentProgramSeconds ?? 1800 }).then(
        (run) => (programEnd = run),
        (error: unknown) => (programEnd = { error }),
      );
      await nextEvent(0);
      if (calls.length === 0) {
        ended(-1);
        throw ApplicationFailure.nonRetryable(`the agent program of ${trajectoryId} ended without making a model call`, FailureType.AgentMadeNoCall);
      }
      return cpu.agentFirstCall({ trajectoryId, requestHash: calls[0]!.requestHash });
    },
    generate: (turnInput) => generate({ ...turnInput, maxNewTokens: calls[turnInput.turn]!.maxTokens }),
    step: async (turn) => {
      Object.assign(calls[turn]!, { answered: true, created: Math.floor(Date.now() / 1000) });
      await nextEvent(turn + 1);
      const { trajectoryId } = request;
      const previousHash = calls[turn]!.requestHash;
      let end: AgentEpisodeEnd | undefined;
      try {
        end = ended(turn);
      } catch (error) {
        over = true;
        throw error;
      }
      if (end === undefined) return cpu.agentNextCall({ trajectoryId, turn, previousHash, requestHash: calls[turn + 1]!.requestHash });
      over = true;
      return judge.agentEpisodeEnd({ trajectoryId, turn, previousHash, end, gold: request.gold, extraction: options.answerExtraction });
    },
  };
}

/** The program's last run failed: its own failure type (AgentProgramFailed, AgentResultInvalid), or a lost worker's. */
function programFailure(error: unknown): unknown {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) return error.cause;
  return error;
}

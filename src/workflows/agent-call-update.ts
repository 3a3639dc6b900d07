import { defineUpdate } from '@temporalio/workflow';
import { FailureType } from '../trajectory/failure.js';

/**
 * One model call of the trajectory's agent program, as its worker's endpoint asks the workflow for it (a Temporal
 * Update, id `<attempt>/<call>`: an OpenAI client's retry of the same call is the same update). The request itself is
 * in Postgres by its hash (`agent_requests`): a call repeats the whole conversation, the history holds only this.
 */
export interface AgentCall {
  /** The program run (the program activity's attempt) that made it. */
  attempt: number;
  /** Its index among the run's calls, from 0: call n is turn n. */
  call: number;
  requestHash: string;
  messageCount: number;
  /** The call's length limit, within the trajectory's per-turn budget. */
  maxTokens: number;
}

/** The call's answer: its turn, generated now or before (the endpoint reads the turn's output from the store). */
export interface AgentCallAnswer {
  turn: number;
  /** Unix seconds when it was first answered (workflow time): the same whenever the call is answered again. */
  created: number;
}

export const agentCallUpdate = defineUpdate<AgentCallAnswer, [AgentCall]>('agentCall');

/** Failure types an update refuses a call with; the endpoint answers each with its own status (src/workers/agent-host.ts). */
export const AgentCallRefusal = {
  /** Another request at an index already recorded: the re-run program is not deterministic in its calls. */
  Diverged: FailureType.CallDiverged,
  /** A call past the next index (a client that counts its calls otherwise). */
  OutOfOrder: 'CallOutOfOrder',
  /** A call past the trajectory's turns: the episode is cut there. */
  TurnLimit: 'TurnLimit',
  /** The episode is over (ended, failed or cut): nothing more is answered. */
  EpisodeOver: 'EpisodeOver',
} as const;

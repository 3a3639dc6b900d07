import { defineQuery } from '@temporalio/workflow';
import type { PackingLayout } from '../trajectory/options.js';
import type { EndReason, TurnRecord, TurnVerdict } from '../trajectory/turn.js';
import type { FailureClass } from '../trajectory/failure.js';

/** What a trainer or the CLI submits: one sample of one problem. The workflow id is the trajectory id. */
export type { TrajectoryRequest } from '../trajectory/request.js';

export interface TrajectoryResult {
  trajectoryId: string;
  qid: string;
  status: 'completed' | 'failed';
  /** Why the turn loop ended (completed trajectories only). */
  endReason?: EndReason;
  layout: PackingLayout;
  turns: TurnRecord[];
  rewards: number[];
  outputTokens: number;
  error?: string;
  /** Failed trajectories only: why, as a type to branch on (src/trajectory/failure.ts). */
  failureType?: string;
  /** Failed trajectories only: `infrastructure` (a rerun may succeed) or `data` (it cannot as it is). */
  failureClass?: FailureClass;
}

/** The live state answered by the `state` query. */
export interface TrajectoryState {
  phase: 'queued' | 'tokenizing' | 'generating' | 'verifying' | 'feedback' | 'persisting' | 'completed' | 'failed';
  /**
   * Turns done, as `RatchetTurn` and the details count them: while generating, the turn in progress is
   * `turn + 1` of `turns`; a finished 5-turn trajectory says 5. (Runs of releases 1-2 answer the index of the
   * last turn started instead.)
   */
  turn: number;
  turns: number;
  verdicts: TurnVerdict[];
  lastAnswerTail: string | null;
  lastPredicted: string | null;
  policyVersion: number | null;
}

export const stateQuery = defineQuery<TrajectoryState>('state');

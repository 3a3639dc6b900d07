import type { CodeVerdictStatus } from '../code/types.js';
import type { VerdictStatus } from '../verifier/index.js';

/** A turn's verdict: the math verifier's, or a code task's (`runtime_error` is code's own). */
export type TurnVerdict = VerdictStatus | CodeVerdictStatus;

export type FinishReason = 'stop' | 'length' | 'abort';

/**
 * Why a trajectory's turn loop ended: all turns ran, early stop on success, the context window ran out, or the
 * environment ended the episode (release 5).
 */
export type EndReason = 'turns' | 'early_stop' | 'context_exhausted' | 'done';

/** What the workflow keeps of one turn: counts and references, never the tokens themselves. */
export interface TurnRecord {
  turn: number;
  /** P_t: tokens of context the turn was generated from. */
  contextLen: number;
  /** |O_t|. */
  outputLen: number;
  finishReason: FinishReason;
  versionStart: number;
  versionEnd: number;
  /** The judge's verdict for math and code; an environment's own label otherwise. */
  verdict: TurnVerdict | (string & {});
  success: boolean;
  /** The environment's reward before shaping (release 5; earlier turns: +1 on success, −1 otherwise). */
  reward?: number;
  /** The environment ended the episode with this turn (release 5). */
  done?: boolean;
  /** Tokens appended after this turn's output (end-of-turn token when cut off, then the feedback user turn). */
  feedbackLen: number;
  /** Tokens carried over from a dead attempt's checkpoint instead of being generated again (absent: none). */
  resumedTokens?: number;
}

/** True when the turn ended without EOS (seq_no_eos_mask). */
export function stoppedWithoutEos(reason: FinishReason): boolean {
  return reason !== 'stop';
}

/** A turn succeeds exactly when its verdict is `correct` (the math verifier's and the code judge's alike). */
export function verdictSucceeded(verdict: string): boolean {
  return verdict === 'correct';
}

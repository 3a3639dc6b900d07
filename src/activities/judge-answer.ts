import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { Verdict, VerifierOptions, VerifierPool } from '../verifier/index.js';
import { FailureType } from './failures.js';

/** One turn's answer to judge against the gold answers. */
export interface TurnToJudge {
  trajectoryId: string;
  turn: number;
  gold: string[];
}

/** Attempts that report a verifier timeout as retryable before the timeout becomes the verdict. */
const TIMEOUT_RETRIES = 1;

/**
 * Runs the verifier on one turn's answer. A timeout is retried once (the machine may have been busy), then
 * recorded as the verdict `timeout` — visible, never folded into `wrong`.
 */
export async function judgeAnswer(verifier: VerifierPool, input: TurnToJudge, answerText: string, options: VerifierOptions = {}): Promise<Verdict> {
  const verdict = await verifier.verify(input.gold, answerText, options);
  if (verdict.status === 'timeout' && Context.current().info.attempt <= TIMEOUT_RETRIES) {
    throw ApplicationFailure.retryable(`verifying ${input.trajectoryId} turn ${input.turn} ran past its budget`, FailureType.VerifierTimeout);
  }
  return verdict;
}

/** A verifier exception is our bug, not the model's: it fails the trajectory instead of scoring it. */
export function throwIfVerifierFailed(input: TurnToJudge, verdict: Pick<Verdict, 'detail'> & { status: string }): void {
  if (verdict.status === 'error') {
    throw ApplicationFailure.nonRetryable(`verifier failed on ${input.trajectoryId} turn ${input.turn}: ${verdict.detail ?? 'unknown error'}`, FailureType.VerifierError);
  }
}

import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { loadTurnOutputIds, saveVerdict } from '../store/turn-store.js';
import type { Verdict, VerdictStatus, VerifierOptions, VerifierPool } from '../verifier/index.js';
import { classified, FailureType } from './failures.js';

export interface VerifyInput {
  trajectoryId: string;
  turn: number;
  gold: string[];
}

export interface VerifyResult {
  status: VerdictStatus;
  success: boolean;
  predicted: string | null;
  /** The end of the decoded answer, for the live-state query; the full text is in Postgres. */
  answerTail: string;
}

/** Attempts that report a verifier timeout as retryable before the timeout becomes the verdict. */
const TIMEOUT_RETRIES = 1;

/**
 * Checks one turn's answer against the gold answers (release 2's separate step; later releases verify in the
 * environment step). Its verdict is stored before a verifier error fails the trajectory.
 */
export function verifyActivity(pool: pg.Pool, tokenizer: ModelTokenizer, verifier: VerifierPool) {
  return async function verify(input: VerifyInput): Promise<VerifyResult> {
    return classified(async () => {
      const answerText = tokenizer.decodeText(await loadTurnOutputIds(pool, input.trajectoryId, input.turn));
      const verdict = await judgeAnswer(verifier, input, answerText);
      await saveVerdict(pool, input.trajectoryId, input.turn, { answerText, extracted: verdict.predicted, status: verdict.status });
      throwIfVerifierFailed(input, verdict);
      return verifyResult(verdict, answerText);
    });
  };
}

/**
 * Runs the verifier on one turn's answer. A timeout is retried once (the machine may have been busy), then
 * recorded as the verdict `timeout` — visible, never folded into `wrong`.
 */
export async function judgeAnswer(verifier: VerifierPool, input: VerifyInput, answerText: string, options: VerifierOptions = {}): Promise<Verdict> {
  const verdict = await verifier.verify(input.gold, answerText, options);
  if (verdict.status === 'timeout' && Context.current().info.attempt <= TIMEOUT_RETRIES) {
    throw ApplicationFailure.retryable(`verifying ${input.trajectoryId} turn ${input.turn} ran past its budget`, FailureType.VerifierTimeout);
  }
  return verdict;
}

/** A verifier exception is our bug, not the model's: it fails the trajectory instead of scoring it. */
export function throwIfVerifierFailed(input: VerifyInput, verdict: Pick<Verdict, 'detail'> & { status: string }): void {
  if (verdict.status === 'error') {
    throw ApplicationFailure.nonRetryable(`verifier failed on ${input.trajectoryId} turn ${input.turn}: ${verdict.detail ?? 'unknown error'}`, FailureType.VerifierError);
  }
}

export function verifyResult(verdict: Verdict, answerText: string): VerifyResult {
  return { status: verdict.status, success: verdict.equal, predicted: verdict.predicted, answerTail: answerText.slice(-400) };
}

import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { loadTurnOutputIds, saveVerdict } from '../store/turn-store.js';
import type { VerdictStatus, VerifierPool } from '../verifier/index.js';
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
 * Checks one turn's answer against the gold answers. A timeout is retried once (the machine may have been
 * busy), then recorded as the verdict `timeout` — visible, never folded into `wrong`. A verifier exception
 * is our bug, not the model's, so it fails the trajectory instead of scoring it.
 */
export function verifyActivity(pool: pg.Pool, tokenizer: ModelTokenizer, verifier: VerifierPool) {
  return async function verify(input: VerifyInput): Promise<VerifyResult> {
    return classified(async () => {
      const answerText = tokenizer.decodeText(await loadTurnOutputIds(pool, input.trajectoryId, input.turn));
      const verdict = await verifier.verify(input.gold, answerText);
      if (verdict.status === 'timeout' && Context.current().info.attempt <= TIMEOUT_RETRIES) {
        throw ApplicationFailure.retryable(`verifying ${input.trajectoryId} turn ${input.turn} ran past its budget`, FailureType.VerifierTimeout);
      }
      await saveVerdict(pool, input.trajectoryId, input.turn, { answerText, extracted: verdict.predicted, status: verdict.status });
      if (verdict.status === 'error') {
        throw ApplicationFailure.nonRetryable(`verifier failed on ${input.trajectoryId} turn ${input.turn}: ${verdict.detail ?? 'unknown error'}`, FailureType.VerifierError);
      }
      return { status: verdict.status, success: verdict.equal, predicted: verdict.predicted, answerTail: answerText.slice(-400) };
    });
  };
}

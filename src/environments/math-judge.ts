import type { Verdict, VerifierOptions, VerifierPool } from '../verifier/index.js';
import { FailureType } from '../trajectory/failure.js';
import { EnvironmentFailure } from './environment.js';

/** Attempts that report a verifier timeout as the machine's fault before the timeout becomes the verdict. */
export const VERIFIER_TIMEOUT_RETRIES = 1;

/** One math answer to judge: the text the verifier reads, and which attempt of the step this is. */
export interface MathAnswer {
  trajectoryId: string;
  turn: number;
  gold: readonly string[];
  text: string;
  attempt: number;
}

/**
 * The one rule for judging a math answer, for every environment that states one (`math`, `math-python-tool`, and the
 * release-2 `verify` step): a timeout is retried once (the machine may have been busy), then recorded as the verdict
 * `timeout`, visible and never folded into `wrong`; a verifier exception is our bug or a bad gold, never the model's,
 * so it fails the trajectory (`VerifierError`, data) instead of scoring it — unless the caller keeps the verdict first.
 */
export async function judgeMathAnswer(
  verifier: VerifierPool,
  answer: MathAnswer,
  options: VerifierOptions = {},
  onError: 'fail' | 'keep' = 'fail',
): Promise<Verdict> {
  const verdict = await verifier.verify([...answer.gold], answer.text, options);
  if (verdict.status === 'timeout' && answer.attempt <= VERIFIER_TIMEOUT_RETRIES) {
    throw new EnvironmentFailure(`verifying ${answer.trajectoryId} turn ${answer.turn} ran past its budget`, 'infrastructure', {
      failureType: FailureType.VerifierTimeout,
    });
  }
  if (verdict.status === 'error' && onError === 'fail') throw verifierFailed(answer, verdict.detail);
  return verdict;
}

export function verifierFailed(answer: Pick<MathAnswer, 'trajectoryId' | 'turn'>, detail: string | undefined): EnvironmentFailure {
  return new EnvironmentFailure(`verifier failed on ${answer.trajectoryId} turn ${answer.turn}: ${detail ?? 'unknown error'}`, 'data', {
    failureType: FailureType.VerifierError,
  });
}

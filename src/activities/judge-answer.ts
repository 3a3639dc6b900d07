import { Context } from '@temporalio/activity';
import { judgeMathAnswer, verifierFailed } from '../environments/math-judge.js';
import type { Verdict, VerifierOptions, VerifierPool } from '../verifier/index.js';

/** One turn's answer to judge against the gold answers. */
export interface TurnToJudge {
  trajectoryId: string;
  turn: number;
  gold: string[];
}

/**
 * Runs the verifier on one turn's answer by the one math rule (src/environments/math-judge.ts), keeping a verifier
 * error as a verdict: release 2's `verify` step stores it before `throwIfVerifierFailed` fails the trajectory.
 */
export async function judgeAnswer(verifier: VerifierPool, input: TurnToJudge, answerText: string, options: VerifierOptions = {}): Promise<Verdict> {
  return judgeMathAnswer(verifier, { ...input, text: answerText, attempt: Context.current().info.attempt }, options, 'keep');
}

/** A verifier exception is our bug, not the model's: it fails the trajectory instead of scoring it. */
export function throwIfVerifierFailed(input: TurnToJudge, verdict: Pick<Verdict, 'detail'> & { status: string }): void {
  if (verdict.status === 'error') throw verifierFailed(input, verdict.detail);
}

import type pg from 'pg';
import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import { loadTurnOutputIds, saveVerdict } from '../../store/write/turn-store.js';
import type { Verdict, VerdictStatus, VerifierPool } from '../../verifier/index.js';
import { classified } from '../failures.js';
import { judgeAnswer, throwIfVerifierFailed, type TurnToJudge } from '../judge-answer.js';

export type VerifyInput = TurnToJudge;

export interface VerifyResult {
  status: VerdictStatus;
  success: boolean;
  predicted: string | null;
  /** The end of the decoded answer, for the live-state query; the full text is in Postgres. */
  answerTail: string;
}

/**
 * Checks one turn's answer against the gold answers: release 2's separate step, called only by runs of releases
 * 1-2 (`releaseTwoTrajectory`); later releases verify in the environment step. Its verdict is stored before a
 * verifier error fails the trajectory. Drop list: src/workflows/releases/drop-list.ts.
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

function verifyResult(verdict: Verdict, answerText: string): VerifyResult {
  return { status: verdict.status, success: verdict.equal, predicted: verdict.predicted, answerTail: answerText.slice(-400) };
}

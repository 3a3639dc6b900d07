import type pg from 'pg';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { loadTurnOutputIds, saveVerdictAndFeedback } from '../store/turn-store.js';
import type { AnswerExtraction, VerifierPool } from '../verifier/index.js';
import { feedbackRenderer } from './append-feedback.js';
import { classified } from './failures.js';
import { judgeAnswer, throwIfVerifierFailed, verifyResult, type VerifyInput, type VerifyResult } from './verify.js';

export interface EnvironmentStepInput extends VerifyInput {
  /** The output ended with EOS; otherwise the feedback first closes the assistant message. */
  outputHadEos: boolean;
  /** The run's answer extraction (rollout option `answerExtraction`); the pool's default when absent. */
  extraction?: AnswerExtraction;
}

export interface EnvironmentStepResult extends VerifyResult {
  feedbackLen: number;
}

/**
 * The environment's answer to one turn: verify the output, then store the verdict and the feedback tokens
 * that follow it, with one read and one write. The workflow runs it as a local activity on the CPU worker,
 * right after the generation completes: milliseconds of work that needs no task queue round trip of its own.
 */
export function environmentStepActivity(pool: pg.Pool, tokenizer: ModelTokenizer, verifier: VerifierPool) {
  const feedbackFor = feedbackRenderer(tokenizer);
  return async function environmentStep(input: EnvironmentStepInput): Promise<EnvironmentStepResult> {
    return classified(async () => {
      const answerText = tokenizer.decodeText(await loadTurnOutputIds(pool, input.trajectoryId, input.turn));
      const verdict = await judgeAnswer(verifier, input, answerText, input.extraction ? { extraction: input.extraction } : {});
      const feedback = feedbackFor(verdict.equal, input.outputHadEos);
      await saveVerdictAndFeedback(pool, input.trajectoryId, input.turn, { answerText, extracted: verdict.predicted, status: verdict.status }, feedback);
      throwIfVerifierFailed(input, verdict);
      return { ...verifyResult(verdict, answerText), feedbackLen: feedback.ids.length };
    });
  };
}

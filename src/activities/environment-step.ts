import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { SandboxFailure, sharedCodeSandboxPool, verifyCodeAnswer, type CodeTask } from '../code/index.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { loadTurnOutputIds, saveVerdictAndFeedback } from '../store/turn-store.js';
import type { TurnVerdict } from '../trajectory/turn.js';
import type { AnswerExtraction, VerifierPool } from '../verifier/index.js';
import { feedbackRenderer } from './append-feedback.js';
import { classified, FailureType } from './failures.js';
import { judgeAnswer, throwIfVerifierFailed, type VerifyInput } from './verify.js';

export interface EnvironmentStepInput extends VerifyInput {
  /** The output ended with EOS; otherwise the feedback first closes the assistant message. */
  outputHadEos: boolean;
  /** The run's answer extraction (rollout option `answerExtraction`); the pool's default when absent. */
  extraction?: AnswerExtraction;
  /** A code task: the answer is judged by running its code against these tests, not against `gold`. */
  code?: CodeTask;
}

export interface EnvironmentStepResult {
  status: TurnVerdict;
  success: boolean;
  /** The extracted answer (for a code task, the code that ran). */
  predicted: string | null;
  /** The end of the decoded answer, for the live-state query; the full text is in Postgres. */
  answerTail: string;
  feedbackLen: number;
}

/**
 * The environment's answer to one turn: judge the output, then store the verdict and the feedback tokens that
 * follow it, with one read and one write. The workflow runs it as a local activity on the CPU worker, right
 * after the generation completes: work that needs no task queue round trip of its own.
 */
export function environmentStepActivity(pool: pg.Pool, tokenizer: ModelTokenizer, verifier: VerifierPool) {
  const feedbackFor = feedbackRenderer(tokenizer);
  return async function environmentStep(input: EnvironmentStepInput): Promise<EnvironmentStepResult> {
    return classified(async () => {
      const answerText = tokenizer.decodeText(await loadTurnOutputIds(pool, input.trajectoryId, input.turn));
      const verdict = input.code ? await judgeCode(input, input.code, answerText) : await judgeMath(verifier, input, answerText);
      const feedback = feedbackFor(verdict.success, input.outputHadEos);
      await saveVerdictAndFeedback(pool, input.trajectoryId, input.turn, { answerText, extracted: verdict.predicted, status: verdict.status }, feedback);
      if (!input.code) throwIfVerifierFailed(input, { status: verdict.status, detail: verdict.detail });
      return { status: verdict.status, success: verdict.success, predicted: verdict.predicted, answerTail: answerText.slice(-400), feedbackLen: feedback.ids.length };
    });
  };
}

interface Judged {
  status: TurnVerdict;
  success: boolean;
  predicted: string | null;
  detail?: string;
}

async function judgeMath(verifier: VerifierPool, input: EnvironmentStepInput, answerText: string): Promise<Judged> {
  const verdict = await judgeAnswer(verifier, input, answerText, input.extraction ? { extraction: input.extraction } : {});
  return { status: verdict.status, success: verdict.equal, predicted: verdict.predicted, detail: verdict.detail };
}

/**
 * A code answer runs in the worker's sandbox pool. A timeout or a crash is the answer's verdict; a sandbox that
 * could not run at all is ours, retried and never scored.
 */
async function judgeCode(input: EnvironmentStepInput, task: CodeTask, answerText: string): Promise<Judged> {
  try {
    const verdict = await verifyCodeAnswer(task, answerText, { sandbox: sharedCodeSandboxPool() });
    return { status: verdict.status, success: verdict.equal, predicted: verdict.predicted, detail: verdict.detail };
  } catch (error) {
    if (error instanceof SandboxFailure) {
      throw ApplicationFailure.retryable(`sandbox failed on ${input.trajectoryId} turn ${input.turn}: ${error.message}`, FailureType.SandboxFailure);
    }
    throw error;
  }
}

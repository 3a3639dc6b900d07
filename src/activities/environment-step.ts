import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { SandboxFailure, verifyCodeAnswer, type CodeSandboxPool, type CodeTask } from '../code/index.js';
import { feedbackRenderer, type FeedbackRenderer } from '../tokens/feedback-renderer.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { ContextMismatch, loadTurnForJudging, saveVerdictAndFeedback, type StoredJudgement } from '../store/turn-store.js';
import { loadStoredOutcome } from '../store/stored-outcome.js';
import { verdictSucceeded, type TurnVerdict } from '../trajectory/turn.js';
import type { AnswerExtraction, VerifierPool } from '../verifier/index.js';
import { classified, FailureType, storedAsFailed } from './failures.js';
import { judgeAnswer, throwIfVerifierFailed, type TurnToJudge } from './judge-answer.js';

export interface EnvironmentStepInput extends TurnToJudge {
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
 *
 * Run again (a local activity is re-run from the last completed workflow task, and a stalled worker may still be
 * running it), it answers with the judgement stored first, never a new one: from the turn's working row while the
 * trajectory runs, from the trajectory's stored row once it was stored (src/workflows/RE-RUNS.md).
 */
export function environmentStepActivity(pool: pg.Pool, tokenizer: ModelTokenizer, verifier: VerifierPool, sandbox: CodeSandboxPool) {
  const feedbackFor = feedbackRenderer(tokenizer);
  return async function environmentStep(input: EnvironmentStepInput): Promise<EnvironmentStepResult> {
    return classified(async () => {
      const turn = await loadTurnForJudging(pool, input.trajectoryId, input.turn);
      if (!turn) return storedStep(pool, input, feedbackFor);
      if (turn.judged) return keptJudgement(input, turn.judged);
      const answerText = tokenizer.decodeText(turn.outputIds);
      const verdict = input.code ? await judgeCode(sandbox, input, input.code, answerText) : await judgeMath(verifier, input, answerText);
      const feedback = feedbackFor(verdict.success, input.outputHadEos);
      const kept = await saveVerdictAndFeedback(pool, input.trajectoryId, input.turn, { answerText, extracted: verdict.predicted, status: verdict.status, ...(verdict.detail === undefined ? {} : { detail: verdict.detail }) }, feedback);
      // Stored meanwhile by a run that went ahead (this one was stalled): the stored row has the answer.
      if (!kept) return storedStep(pool, input, feedbackFor);
      return keptJudgement(input, kept, verdict.detail);
    });
  };
}

/** The step's answer from the judgement kept in the turn's working row (this run's or an earlier one's). */
function keptJudgement(input: EnvironmentStepInput, kept: StoredJudgement, detail?: string): EnvironmentStepResult {
  if (!input.code) throwIfVerifierFailed(input, { status: kept.status, detail: detail ?? 'the verifier failed on an earlier run of this step' });
  return {
    status: kept.status as TurnVerdict, success: verdictSucceeded(kept.status), predicted: kept.extracted,
    answerTail: kept.answerText.slice(-400), feedbackLen: kept.feedbackLen,
  };
}

/**
 * The step's answer once the trajectory is stored: its verdict from the monitor record and turn text, the feedback
 * length from the next turn's context (the last turn's feedback is not stored: it is rendered again, the same
 * tokens for the same verdict).
 */
async function storedStep(pool: pg.Pool, input: EnvironmentStepInput, feedbackFor: FeedbackRenderer): Promise<EnvironmentStepResult> {
  const stored = await loadStoredOutcome(pool, input.trajectoryId, input.turn);
  if (stored?.status === 'failed') throw storedAsFailed(input.trajectoryId, `judge turn ${input.turn}`);
  if (!stored?.turn) throw new ContextMismatch(`trajectory ${input.trajectoryId} has no output for turn ${input.turn}, stored or working`);
  const { turn } = stored;
  return {
    status: turn.verdict as TurnVerdict, success: turn.success, predicted: turn.extracted, answerTail: turn.answerText.slice(-400),
    feedbackLen: turn.feedbackLen ?? feedbackFor(turn.success, input.outputHadEos).ids.length,
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
async function judgeCode(sandbox: CodeSandboxPool, input: EnvironmentStepInput, task: CodeTask, answerText: string): Promise<Judged> {
  try {
    const verdict = await verifyCodeAnswer(task, answerText, { sandbox });
    return { status: verdict.status, success: verdict.equal, predicted: verdict.predicted, detail: verdict.detail };
  } catch (error) {
    if (error instanceof SandboxFailure) {
      throw ApplicationFailure.retryable(`sandbox failed on ${input.trajectoryId} turn ${input.turn}: ${error.message}`, FailureType.SandboxFailure);
    }
    throw error;
  }
}

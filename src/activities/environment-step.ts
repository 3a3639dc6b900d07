import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { CodeTask } from '../code/index.js';
import type { EnvironmentBounds } from '../environments/bounds.js';
import type { EnvironmentSet } from '../environments/environment-set.js';
import { environmentNameOf, unknownEnvironment } from '../environments/environment-set.js';
import type { JsonValue, StepResult } from '../environments/environment.js';
import { checkStepResult } from '../environments/step-result.js';
import { observationRenderer, type ObservationRenderer } from '../tokens/feedback-renderer.js';
import { feedbackText } from '../tokens/math-prompt.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { verdictSucceeded } from '../trajectory/turn.js';
import {
  ContextMismatch,
  loadTurnForJudging,
  saveVerdictAndFeedback,
  type EnvironmentStepRecord,
  type StoredJudgement,
} from '../store/write/turn-store.js';
import { loadStoredOutcome } from '../store/write/stored-outcome.js';
import type { FinishReason } from '../trajectory/turn.js';
import type { AnswerExtraction } from '../verifier/index.js';
import { boundedEnvironmentCall } from './environment-call.js';
import { environmentTask, type EnvironmentTaskInput } from './environment-task.js';
import { classified, storedAsFailed } from './failures.js';
import { throwIfVerifierFailed, type TurnToJudge } from './judge-answer.js';

export interface EnvironmentStepInput extends TurnToJudge, Partial<Omit<EnvironmentTaskInput, 'trajectoryId' | 'gold'>> {
  /** The output ended with EOS; otherwise the observations first close the assistant message. */
  outputHadEos: boolean;
  /** The run's answer extraction (rollout option `answerExtraction`); the pool's default when absent. */
  extraction?: AnswerExtraction;
  /** A code task: the answer is judged by running its code against these tests, not against `gold`. */
  code?: CodeTask;
  /** Release 5: the environment by name (absent: math, or code for a code task, as releases 3–4 sent it). */
  environment?: string;
  /** Release 5: how the turn ended (for the environment), and the state the previous step left. */
  finishReason?: FinishReason;
  state?: JsonValue;
  /** A step its own worker already took (an environment served on its own task queue): checked, tokenized and kept here. */
  taken?: unknown;
  /** Release 6: the attempts and deadline the environment's own code runs under (absent: unbounded, as release 5 ran it). */
  bounds?: EnvironmentBounds;
}

export interface EnvironmentStepResult {
  /** The verdict's label: the math verifier's, the code judge's, or the environment's own. */
  status: string;
  success: boolean;
  /** The extracted answer (for a code task, the code that ran). */
  predicted: string | null;
  /** The end of the decoded answer, for the live-state query; the full text is in Postgres. */
  answerTail: string;
  feedbackLen: number;
  /** The turn's reward before shaping (+1/−1 for math and code). */
  reward: number;
  /** The environment ended the episode. */
  done: boolean;
  /** What the next step starts from. */
  state?: JsonValue;
  /**
   * The next turn's context length, when it is not this turn's plus its output and feedback: an agent program's next
   * call rewrote its history (a fork), and the next turn starts from the fork's tokens. Absent otherwise.
   */
  contextLen?: number;
}

/**
 * The environment's answer to one turn: step the environment on the output, then store the verdict and the tokens
 * of its observations that follow the output, with one read and one write. The workflow runs it as a local activity
 * on the CPU worker right after the generation: work that needs no task queue round trip of its own. For an
 * environment served on its own task queue, the workflow passes the step its worker took (`taken`) and this only
 * checks and keeps it.
 *
 * Run again (a local activity is re-run from the last completed workflow task, and a stalled worker may still be
 * running it), it answers with the step stored first, never a new one: from the turn's working row while the
 * trajectory runs, from the trajectory's stored row once it was stored (src/workflows/RE-RUNS.md).
 */
export function environmentStepActivity(pool: pg.Pool, tokenizer: ModelTokenizer, environments: EnvironmentSet) {
  const render = observationRenderer(tokenizer);
  return async function environmentStep(input: EnvironmentStepInput): Promise<EnvironmentStepResult> {
    return classified(async () => {
      // The step's duration (migration 018's verify_ms): from here to its verdict and feedback being ready.
      const started = performance.now();
      const turn = await loadTurnForJudging(pool, input.trajectoryId, input.turn);
      if (!turn) return storedStep(pool, input, render);
      if (turn.judged) return keptJudgement(input, turn.judged);
      const answerText = tokenizer.decodeText(turn.outputIds);
      const step = await takeStep(environments, input, answerText, turn.outputIds);
      const feedback = render(step.observations, input.outputHadEos);
      const record: EnvironmentStepRecord = {
        observations: step.observations,
        reward: step.reward,
        success: step.success,
        done: step.done,
        info: step.info ?? {},
        ...(step.state === undefined ? {} : { state: step.state }),
      };
      const verdict = {
        answerText,
        extracted: step.predicted ?? null,
        status: step.verdict,
        ...(step.detail === undefined ? {} : { detail: step.detail }),
      };
      const kept = await saveVerdictAndFeedback(pool, input.trajectoryId, input.turn, verdict, feedback, record, performance.now() - started);
      // Stored meanwhile by a run that went ahead (this one was stalled): the stored row has the answer.
      if (!kept) return storedStep(pool, input, render);
      return keptJudgement(input, kept);
    });
  };
}

async function takeStep(environments: EnvironmentSet, input: EnvironmentStepInput, text: string, tokenIds: readonly number[]): Promise<StepResult> {
  if (input.taken !== undefined) return checkStepResult(input.taken, 'step');
  const name = environmentNameOf(input);
  const environment = environments.get(name);
  if (!environment) throw unknownEnvironment(name, environments);
  const action = {
    turn: input.turn,
    text,
    tokenIds,
    finishReason: input.finishReason ?? (input.outputHadEos ? 'stop' : 'length'),
    attempt: Context.current().info.attempt,
  } as const;
  const answer = await boundedEnvironmentCall(`${name} step of turn ${input.turn}`, input.bounds, () =>
    environment.step(environmentTask(input), action, input.state),
  );
  return checkStepResult(answer, `${name} step`);
}

/** The step's answer from the judgement kept in the turn's working row (this run's or an earlier one's). */
function keptJudgement(input: EnvironmentStepInput, kept: StoredJudgement): EnvironmentStepResult {
  if (!input.code) throwIfVerifierFailed(input, { status: kept.status, detail: 'the verifier failed on an earlier run of this step' });
  return resultOf(kept.status, kept.extracted, kept.answerText, kept.feedbackLen, kept.environmentStep);
}

/**
 * The step's answer once the trajectory is stored: its verdict from the monitor record and turn text, the
 * observations' length from the next turn's context (the last turn's are not stored: they are rendered again, the
 * same tokens for the same messages).
 */
async function storedStep(pool: pg.Pool, input: EnvironmentStepInput, render: ObservationRenderer): Promise<EnvironmentStepResult> {
  const stored = await loadStoredOutcome(pool, input.trajectoryId, input.turn);
  if (stored?.status === 'failed') throw storedAsFailed(input.trajectoryId, `judge turn ${input.turn}`);
  if (!stored?.turn) throw new ContextMismatch(`trajectory ${input.trajectoryId} has no output for turn ${input.turn}, stored or working`);
  const { turn } = stored;
  const observations = turn.environmentStep?.observations ?? seedFeedback(turn.success);
  const feedbackLen = turn.feedbackLen ?? render(observations, input.outputHadEos).ids.length;
  // The stored row's success is the one the trainer reads: the answer agrees with it.
  return { ...resultOf(turn.verdict, turn.extracted, turn.answerText, feedbackLen, turn.environmentStep), success: turn.success };
}

/**
 * Turns judged before environments kept no step: their observation was the seed's feedback, their reward ±1. The
 * success is the environment's own (release 6 keeps it with the step); steps kept before that succeeded by their verdict.
 */
function resultOf(
  status: string,
  predicted: string | null,
  answerText: string,
  feedbackLen: number,
  step: EnvironmentStepRecord | undefined,
): EnvironmentStepResult {
  const success = step?.success ?? verdictSucceeded(status);
  return {
    status,
    success,
    predicted,
    answerTail: answerText.slice(-400),
    feedbackLen,
    reward: step?.reward ?? (success ? 1 : -1),
    done: step?.done ?? false,
    ...(step?.state === undefined ? {} : { state: step.state as JsonValue }),
  };
}

function seedFeedback(success: boolean): { role: string; content: string }[] {
  return [{ role: 'user', content: feedbackText(success) }];
}

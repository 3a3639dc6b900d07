import type { CodeTask } from '../code/types.js';
import type { FinishReason } from '../trajectory/turn.js';
import type { AnswerExtraction } from '../verifier/index.js';

/** A JSON value: what an environment's state, arguments and info may hold (they pass through workflow history). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A message the environment adds to the conversation, in any chat role the model's template knows (`user`,
 * `tool`, `system`). Its tokens are cut from the template's own rendering, after the assistant turn it answers.
 */
export interface ObservationMessage {
  role: string;
  content: string;
}

/** What an episode starts from: the trajectory request's fields an environment may read. */
export interface EnvironmentTask {
  trajectoryId: string;
  qid: string;
  problem: string;
  gold: readonly string[];
  /** A code task's tests (the `code` environment). */
  code?: CodeTask;
  /** The request's `environmentArgs`: whatever the environment needs beyond the problem (a game's seed, a tool list). */
  args?: { [key: string]: JsonValue };
  /** A seed derived from the trajectory id: an environment that draws at random draws from it, so a re-run draws the same. */
  seed: number;
  /** The run's answer extraction (rollout option `answerExtraction`), for environments that judge a math answer. */
  answerExtraction?: AnswerExtraction;
}

/**
 * The episode's first messages: a conversation the chat template renders with the generation prompt, or a prompt
 * already rendered (AReaL's code rows come that way), tokenized as it is.
 */
export type EnvironmentStart = ({ messages: ObservationMessage[] } | { renderedPrompt: string }) & {
  /** Carried by the workflow to the first step (and each step's to the next), so any worker can take a step. */
  state?: JsonValue;
};

/** What the model did in one turn. */
export interface TurnAction {
  turn: number;
  /** The decoded output. */
  text: string;
  /** The output's token ids, for environments that need them (local environments only). */
  tokenIds: readonly number[];
  /** `stop`: the output ended with EOS; `length`: cut off at the token limit. */
  finishReason: FinishReason;
  /** The step's attempt, 1 first: an environment may treat a first timeout as the machine's fault and ask for a retry. */
  attempt: number;
}

/** The environment's answer to one turn. */
export interface StepResult {
  /** Appended to the conversation after the turn's output, before the next generation prompt; none on a last turn is fine. */
  observations: ObservationMessage[];
  /** The turn's reward before the run's bias and scaling (the seed's math reward is +1 correct, −1 otherwise). */
  reward: number;
  /** The turn solved the task (counted as the trajectory's successes, and by early stop). */
  success: boolean;
  /** The episode is over: no further turn is generated. */
  done: boolean;
  /** A short label for the UI and metrics: `correct`, `wrong`, `no_answer`, `tool_call`, a game's own. */
  verdict: string;
  /** What was judged (the extracted answer, the code that ran), shown on the trajectory page. */
  predicted?: string | null;
  /** Why the verdict is what it is (a failing test, a traceback's end), bounded when stored. */
  detail?: string;
  /** Free-form, kept with the turn and shown on the trajectory page. */
  info?: { [key: string]: JsonValue };
  /** Passed to the next step. */
  state?: JsonValue;
}

/**
 * An environment: the episode's first messages from a request, then a step result for each turn's output.
 * Implementations must answer the same for the same task, action and state (a step may be run again after a
 * crash; the first answer stored is the one kept). A step that cannot be taken throws `EnvironmentFailure`.
 */
export interface Environment {
  readonly name: string;
  /** The step runs code (or anything slow): it gets the sandbox step's longer timeout. */
  readonly slowSteps?: boolean;
  reset(task: EnvironmentTask): Promise<EnvironmentStart>;
  step(task: EnvironmentTask, action: TurnAction, state: JsonValue | undefined): Promise<StepResult>;
}

/**
 * A step the environment could not take. `data`: this task or this answer cannot be stepped as it is (the
 * trajectory fails, typed, and no rerun helps); `infrastructure`: something around it broke (retried, then failed).
 */
export class EnvironmentFailure extends Error {
  override readonly name = 'EnvironmentFailure';
  /** The failure type the trajectory records (EnvironmentDataError or EnvironmentError unless an environment names its own). */
  readonly failureType: string;
  /** Whether the step is tried again (by default: infrastructure failures are, data failures are not). */
  readonly retryable: boolean;
  constructor(
    message: string,
    readonly failureClass: 'data' | 'infrastructure',
    options: { failureType?: string; retryable?: boolean } = {},
  ) {
    super(message);
    this.failureType = options.failureType ?? (failureClass === 'data' ? 'EnvironmentDataError' : 'EnvironmentError');
    this.retryable = options.retryable ?? failureClass === 'infrastructure';
  }
}

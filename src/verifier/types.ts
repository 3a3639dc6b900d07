/** How a check ended. Only `correct` is a match; `timeout` and `error` are failures, never "wrong". */
export type VerdictStatus = 'correct' | 'wrong' | 'no_answer' | 'timeout' | 'error';

/** The outcome of checking one model output against its gold answer(s). */
export interface Verdict {
  /** True only for `correct`. */
  equal: boolean;
  status: VerdictStatus;
  /** The answer extracted from the model output, or null when none was found. */
  predicted: string | null;
  /** The gold answer(s) extracted from the dataset's gold field. */
  gold: string[];
  /** Why: the rule that matched, or the error message. */
  detail?: string;
  elapsedMs: number;
}

/**
 * Where the answer of a model output is found (POLICIES.md, "What counts as the answer"):
 * `stated` (the default, for RL rewards) needs a box, an answer statement or an output that is
 * itself an answer; `math-verify` also reads the last math span or number of any text, as
 * Math-Verify does.
 */
export type AnswerExtraction = 'stated' | 'math-verify';

/** Options of one check. */
export interface VerifierOptions {
  /** Default `stated`. */
  extraction?: AnswerExtraction;
}

/** Options of {@link VerifierPool}. */
export interface VerifierPoolOptions {
  /** The extraction used when a check does not name one; default `stated`. */
  extraction?: AnswerExtraction;
  /** Worker threads; default min(2, available cores). */
  size?: number;
  /** Wall-clock budget per check in ms; default 3000. */
  budgetMs?: number;
}

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

/** Options of {@link VerifierPool}. */
export interface VerifierPoolOptions {
  /** Worker threads; default min(2, available cores). */
  size?: number;
  /** Wall-clock budget per check in ms; default 3000. */
  budgetMs?: number;
}

/** The test cases of a code row, as AReaL's `input_output` decodes: lists of equal length. */
export interface CodeTests {
  inputs: string[];
  outputs: string[];
  /** Empty: each input is the whole stdin of one run. Set: LeetCode style, call this method or function. */
  fnName: string;
}

/** What it takes to judge a code answer: the tests and the row's limits. */
export interface CodeTask {
  tests: CodeTests;
  /** Wall-clock limit per test case in seconds; default 6 (AReaL's). */
  timeoutS?: number;
  /** Memory limit of the solution in MB; default 512. */
  memoryMb?: number;
}

/** How a code check ended. Only `correct` is a success; a sandbox that failed throws `SandboxFailure` instead. */
export type CodeVerdictStatus = 'correct' | 'wrong' | 'no_answer' | 'timeout' | 'runtime_error';

/** The outcome of running one answer's code against every test case of its task. */
export interface CodeVerdict {
  /** True only for `correct`. */
  equal: boolean;
  status: CodeVerdictStatus;
  /** The code that ran (the answer's last fenced block), or null when there was none. */
  predicted: string | null;
  /** Test cases that passed before the first failure (all of them when correct). */
  passed: number;
  total: number;
  /** Why: the comparison rule that matched, the failing test and what went wrong. */
  detail?: string;
  elapsedMs: number;
}

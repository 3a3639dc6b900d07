import type { CodeTask } from '../code/types.js';
import type { JsonValue } from '../environments/environment.js';
import type { RowError } from './row-error.js';

/** One dataset row, normalised across the GSM8K, MATH and AReaL shapes. */
export interface Problem {
  /** Stable id: `unique_id` / `query_id` when present, else `${fileStem}-${lineNumber}` (1-based line). */
  qid: string;
  /** The row's integer `task_id`, when it has one. */
  taskId?: number;
  /** The question text. */
  problem: string;
  /**
   * Gold answers as the dataset stores them (GSM8K: the worked answer; MATH: [answer]; AReaL: solutions).
   * For a code task: its reference solutions, possibly none; the tests in `code` are what judges an answer.
   */
  gold: string[];
  source: 'gsm8k' | 'math' | 'areal' | 'apps' | 'livecodebench';
  /** Present on a code row only: its test cases and limits. Absent means a math problem. */
  code?: CodeTask;
  /**
   * The row's `environment`: the environment its episodes run in (`math`, `code`, `math-python-tool`, or one served
   * on its own task queue). Absent: `code` for a code task, `math` otherwise.
   */
  environment?: string;
  /** The row's `environment_args`: what the environment needs beyond the problem (a game's range, a tool list). */
  environmentArgs?: { [key: string]: JsonValue };
}

/** The valid problems of one file, and every row that was skipped. */
export interface LoadedDataset {
  problems: Problem[];
  errors: RowError[];
}

export interface DatasetOptions {
  /** Stop after this many valid problems. */
  limit?: number;
}

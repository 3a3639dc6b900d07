import { matchOutput } from './compare-output.js';
import { matchReturn } from './compare-return.js';
import type { TestRun } from './run-test.js';

/** One test's outcome: passed by a rule, or failed with a verdict and why. */
export type TestOutcome =
  | { status: 'passed'; rule: string }
  | { status: 'wrong' | 'timeout' | 'runtime_error'; detail: string };

// CPU-time limit (RLIMIT_CPU: SIGXCPU, then SIGKILL at the hard limit); the tools report a signal as 128 + it.
const CPU_SIGNALS = new Set(['SIGXCPU', 'SIGKILL']);
const CPU_STATUSES = new Set([128 + 24, 128 + 9]);

const STOPPED = {
  timeout: { status: 'timeout', detail: 'ran past its time limit' },
  output_limit: { status: 'runtime_error', detail: 'printed more than the output limit' },
  memory_limit: { status: 'runtime_error', detail: 'MemoryError: its processes together held more than its memory limit' },
} as const satisfies Record<string, TestOutcome>;

/**
 * The verdict of one test from what the solution did and printed, all read outside the sandbox: the
 * expected output never entered it, and the solution's stdout (call mode: the JSON of its return value) is
 * compared here.
 */
export function judgeRun(run: TestRun, expected: string, callMode: boolean): TestOutcome {
  const stderr = run.stderr.trim().slice(-600);
  if (run.kind !== 'exited') return STOPPED[run.kind];
  const cpu = cpuLimitKill(run);
  if (cpu !== null) return { status: 'timeout', detail: cpu };
  if (run.code !== 0) return { status: 'runtime_error', detail: `crashed: ${run.signal ?? `exit status ${run.code}`}${stderr ? `\n${stderr}` : ''}` };
  const actual = run.stdout.toString('utf8');
  const rule = callMode ? matchReturn(actual, expected) : matchOutput(actual, expected);
  if (rule === null) return { status: 'wrong', detail: `expected ${preview(expected)}, got ${preview(actual)}` };
  return { status: 'passed', rule };
}

/** How a process that ended by itself was killed at its CPU-time limit (the reason, as a detail), or null when it was not. */
export function cpuLimitKill(run: Extract<TestRun, { kind: 'exited' }>): string | null {
  if (run.signal !== null && CPU_SIGNALS.has(run.signal)) return `killed by ${run.signal} (CPU time limit)`;
  if (run.code !== null && CPU_STATUSES.has(run.code)) return `killed by signal ${run.code - 128} (CPU time limit)`;
  return null;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

import { matchOutput } from './compare-output.js';
import { matchReturn } from './compare-return.js';
import type { TestRun } from './run-test.js';

/** One test's outcome: passed by a rule, or failed with a verdict and why. */
export type TestOutcome = { status: 'passed'; rule: string } | { status: 'wrong' | 'timeout' | 'runtime_error'; detail: string };

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
  // Killed by a signal (its own SIGKILL included) is never correct, whatever it printed first.
  if (run.signal !== null) return { status: 'runtime_error', detail: `killed by ${run.signal}${stderr ? `\n${stderr}` : ''}` };
  if (run.code === null)
    return { status: 'runtime_error', detail: `the sandbox ended without the solution's exit status${stderr ? `\n${stderr}` : ''}` };
  if (run.code !== 0) return { status: 'runtime_error', detail: `crashed: exit status ${run.code}${stderr ? `\n${stderr}` : ''}` };
  const actual = run.stdout.toString('utf8');
  const rule = callMode ? matchReturn(actual, expected) : matchOutput(actual, expected);
  if (rule === null) return { status: 'wrong', detail: `expected ${preview(expected)}, got ${preview(actual)}` };
  return { status: 'passed', rule };
}

/**
 * How a process that ended by itself was killed at its CPU-time limit (the reason, as a detail), or null when it
 * was not: the launcher says so only when the signal is the limit's (SIGXCPU, or SIGKILL at the hard limit) and the
 * process had used its CPU time. An exit status of 137 is an exit status, and a SIGKILL it sent itself is a crash.
 */
export function cpuLimitKill(run: Extract<TestRun, { kind: 'exited' }>): string | null {
  return run.cpuLimit ? `killed by ${run.signal ?? 'a signal'} at its CPU time limit (${run.cpuSeconds.toFixed(1)} s of CPU)` : null;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

import { cpuLimitKill } from './judge-run.js';
import type { CodeSandboxPool } from './sandbox-pool.js';

/** A script's limits: wall-clock seconds from the sandbox's start, and memory of all its processes together. */
export interface ScriptLimits {
  timeoutS: number;
  memoryMb: number;
}

/**
 * How a script's run ended, every field read by the worker from the sandbox itself (the exit status, the
 * kill it made), never from anything the script printed.
 */
export interface ScriptRun {
  /**
   * `exited`: it ended by itself; `timeout`: it ran past its time limit (wall clock, or CPU time) and was killed;
   * `output_limit` / `memory_limit`: it printed more than the sandbox's output limit, or held more memory, and was killed.
   */
  outcome: 'exited' | 'timeout' | 'output_limit' | 'memory_limit';
  /** The exit status when it exited (null when a signal ended it, or when it was stopped). */
  exitCode: number | null;
  signal: string | null;
  /** What it printed on stdout; empty when it was stopped (the sandbox keeps no partial output). */
  stdout: string;
  /** The tail of its stderr (a traceback's end). */
  stderr: string;
  elapsedMs: number;
}

/**
 * Runs `code` as a plain Python script (`__main__`, empty stdin) in one of the pool's sandboxes, under the same
 * isolation and limits as a code answer's test, and says how it ended. A sandbox that cannot run throws
 * `SandboxFailure`, as for code answers.
 */
export async function runScript(sandbox: CodeSandboxPool, code: string, limits: ScriptLimits): Promise<ScriptRun> {
  if (!(limits.timeoutS > 0) || !(limits.memoryMb > 0)) throw new RangeError(`a script needs positive limits, got ${JSON.stringify(limits)}`);
  const run = await sandbox.runTest({ code, fnName: '', ...limits }, '', limits.timeoutS * 1000);
  if (run.kind !== 'exited') return { outcome: run.kind, exitCode: null, signal: null, stdout: '', stderr: run.stderr, elapsedMs: run.elapsedMs };
  return {
    outcome: cpuLimitKill(run) === null ? 'exited' : 'timeout',
    exitCode: run.code,
    signal: run.signal,
    stdout: run.stdout.toString('utf8'),
    stderr: run.stderr,
    elapsedMs: run.elapsedMs,
  };
}

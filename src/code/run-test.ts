import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { BoundedOutput, OutputTail } from './bounded-output.js';
import { encodeJob, type SandboxJob } from './sandbox-job.js';
import { SandboxFailure } from './sandbox-failure.js';
import { childrenOf, killSandbox } from './sandbox-kill.js';
import { sandboxMemoryBytes } from './sandbox-memory.js';
import { startRunningBudget, type RunningBudget } from '../timing/running-budget.js';

/** How one test's run ended, short of a sandbox failure (which throws). */
export type TestRun =
  /**
   * The solution's process ended by itself: its exit status or the signal that ended it, as the launcher saw it
   * reap the process (both null when the sandbox ended without saying), its own CPU seconds, whether its CPU-time
   * limit fired, and what it printed (call mode: its return value's JSON).
   */
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null; cpuSeconds: number; cpuLimit: boolean; stdout: Buffer; stderr: string; elapsedMs: number }
  /** It ran past its deadline, printed more than the limit or held more memory: the sandbox was killed, every process of it. */
  | { kind: Stop; stderr: string; elapsedMs: number };

type Stop = 'timeout' | 'output_limit' | 'memory_limit';

export interface TestLaunch {
  argv: string[];
  uid?: number;
  gid?: number;
  /** From the sandbox's ready byte to the kill. */
  timeoutMs: number;
  /** From the spawn to the ready byte; past it the sandbox, not the answer, failed. */
  setupTimeoutMs: number;
  maxOutputBytes: number;
  /** What all processes of the sandbox may hold together. */
  memoryLimitBytes: number;
  /** Bytes for fd 5 (bwrap's --seccomp), when the tool installs the filter. */
  seccompFilter?: Buffer;
}

const STDERR_TAIL = 4000;
/** After the kill or the exit, how long stdio may take to drain before the run resolves without it. */
const DRAIN_MS = 1000;
/**
 * How often the sandbox's memory is summed, from the ready byte on (asynchronously, one poll at a time): a burst
 * shorter than this can pass unseen, bounded then by RLIMIT_AS per process (docs/code-sandbox.md, "Memory").
 */
const MEMORY_POLL_MS = 50;
/**
 * How much a freeze of the worker may lengthen a test past its limit, all freezes together: the running budget
 * does not count a freeze against the answer, and this caps what it may discount, so that nothing the solution
 * does (nor a worker frozen for good) stretches a test without bound.
 */
export const FREEZE_ALLOWANCE_MS = 10_000;
/** The launcher's line on fd 4 when the solution's process ends (launcher.py, `ending`). */
const END_RECORD = /^(exit|signal) (\d+) cpu ([\d.]+) cpu_limit ([01])\n$/;

/**
 * Runs one test in a fresh sandbox: the job on fd 3, the test's input on stdin, the ready byte on fd 4 (and
 * bwrap's seccomp filter on fd 5), then the solution's stdout (bounded) and stderr (its tail), and on fd 4 the
 * launcher's line saying how the solution's process ended. The worker holding fd 4 open is the sandbox's
 * lifeline: the launcher ends the sandbox when it hangs up. Resolves at the
 * deadline whatever the solution did to its stdio; past the deadline, the output limit or the memory limit
 * (summed over the sandbox's processes) the whole sandbox is killed. Throws `SandboxFailure` when the sandbox
 * cannot start or ends before it is ready.
 */
export function runTest(launch: TestLaunch, job: SandboxJob, input: string): Promise<TestRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const [command, ...args] = launch.argv;
    const child = spawn(command!, args, {
      cwd: '/',
      // Nothing of the worker's environment: no credentials, no DATABASE_URL, no PATH.
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', launch.seccompFilter ? 'pipe' : 'ignore'],
      ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
    });
    const [stdin, stdout, stderr, jobChannel, readyChannel, filterChannel] = child.stdio as unknown as [Writable, Readable, Readable, Writable, Readable, Writable | null];
    const output = new BoundedOutput(launch.maxOutputBytes);
    const tail = new OutputTail(STDERR_TAIL);
    let ready = false;
    let stopped: Stop | undefined;
    let init: number | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let deadline: RunningBudget | undefined;
    let drain: NodeJS.Timeout | undefined;
    let memoryPoll: NodeJS.Timeout | undefined;
    let hardDeadline: NodeJS.Timeout | undefined;
    let report = '';

    const settle = (): void => {
      if (settled) return;
      settled = true;
      deadline?.cancel();
      clearTimeout(drain);
      setup.cancel();
      clearInterval(memoryPoll);
      clearTimeout(hardDeadline);
      if (child.pid !== undefined && exit === undefined) killSandbox(child.pid);
      for (const stream of [stdin, stdout, stderr, jobChannel, readyChannel, filterChannel]) stream?.destroy();
      const elapsedMs = performance.now() - started;
      if (!ready) {
        const how = exit ? (exit.signal ?? `status ${exit.code}`) : 'no exit';
        reject(new SandboxFailure(`${command} ended (${how}) before the sandbox was ready: ${tail.text().trim() || 'no error output'}`));
      } else if (stopped) resolve({ kind: stopped, stderr: tail.text(), elapsedMs });
      else resolve({ kind: 'exited', ...solutionEnd(report), stdout: output.bytes(), stderr: tail.text(), elapsedMs });
    };
    const stop = (why: Stop): void => {
      if (stopped || settled) return;
      stopped = why;
      clearInterval(memoryPoll);
      if (child.pid !== undefined) killSandbox(child.pid);
      drain = setTimeout(settle, DRAIN_MS);
    };
    // Both limits count the time this process ran, not a freeze of it and the sandbox under it (running-budget.ts):
    // a stalled worker must not judge a correct answer a timeout.
    const setup = startRunningBudget(launch.setupTimeoutMs, () => {
      if (!ready) settle();
    });

    let polling = false;
    const pollMemory = async (): Promise<void> => {
      if (polling || child.pid === undefined || exit || stopped) return;
      polling = true;
      try {
        init ??= childrenOf(child.pid)[0];
        const held = init === undefined ? undefined : await sandboxMemoryBytes(init, launch.memoryLimitBytes);
        if (held !== undefined && held > launch.memoryLimitBytes) stop('memory_limit');
      } finally {
        polling = false;
      }
    };
    // The ready byte, then (once the solution's process ends) the launcher's line saying how it ended.
    readyChannel.on('data', (chunk: Buffer) => {
      if (!ready) {
        ready = true;
        deadline = startRunningBudget(launch.timeoutMs, () => stop('timeout'));
        hardDeadline = setTimeout(() => stop('timeout'), launch.timeoutMs + FREEZE_ALLOWANCE_MS);
        // From the start, every MEMORY_POLL_MS: no window longer than that goes unseen.
        memoryPoll = setInterval(() => void pollMemory(), MEMORY_POLL_MS);
        chunk = chunk.subarray(1);
      }
      if (report.length < 200) report += chunk.toString('latin1');
    });
    stdout.on('data', (chunk: Buffer) => {
      if (!output.push(chunk)) stop('output_limit');
    });
    stderr.on('data', (chunk: Buffer) => tail.push(chunk));
    // The solution may never read its input, or close it: a write error is no failure of the sandbox.
    stdin.on('error', () => {});
    jobChannel.on('error', () => {});
    child.on('error', (error) => {
      settled = true;
      setup.cancel();
      deadline?.cancel();
      reject(new SandboxFailure(`cannot start ${command}: ${error.message}`, { cause: error }));
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      drain ??= setTimeout(settle, DRAIN_MS);
    });
    child.on('close', settle);
    jobChannel.end(encodeJob(job));
    filterChannel?.on('error', () => {});
    filterChannel?.end(launch.seccompFilter);
    stdin.end(input);
  });
}

/** How the solution's process ended, from the launcher's line; nulls when the sandbox ended without one. */
function solutionEnd(report: string): { code: number | null; signal: NodeJS.Signals | null; cpuSeconds: number; cpuLimit: boolean } {
  const [, how, number, cpu, limit] = END_RECORD.exec(report) ?? [];
  if (how === undefined) return { code: null, signal: null, cpuSeconds: 0, cpuLimit: false };
  const value = Number(number);
  const signal = how === 'signal' ? ((Object.entries(constants.signals).find(([, n]) => n === value)?.[0] ?? `SIG${value}`) as NodeJS.Signals) : null;
  return { code: how === 'exit' ? value : null, signal, cpuSeconds: Number(cpu), cpuLimit: limit === '1' };
}

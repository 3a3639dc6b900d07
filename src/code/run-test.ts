import { spawn, type ChildProcess } from 'node:child_process';
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
  | {
      kind: 'exited';
      code: number | null;
      signal: NodeJS.Signals | null;
      cpuSeconds: number;
      cpuLimit: boolean;
      stdout: Buffer;
      stderr: string;
      elapsedMs: number;
    }
  /** It ran past its deadline, printed more than the limit or held more memory: the sandbox was killed, every process of it. */
  | { kind: Stop; stderr: string; elapsedMs: number };

type Stop = 'timeout' | 'output_limit' | 'memory_limit';

/** How one answer's sandbox starts and what holds each of its tests. */
export interface SandboxLaunch {
  argv: string[];
  uid?: number;
  gid?: number;
  /** From the spawn to the first test's ready byte; past it the sandbox, not the answer, failed. */
  setupTimeoutMs: number;
  maxOutputBytes: number;
  /** What all processes of the sandbox may hold together. */
  memoryLimitBytes: number;
  /** Bytes for fd 5 (bwrap's --seccomp), when the tool installs the filter. */
  seccompFilter?: Buffer;
}

/** A test run in a sandbox that already ran one, whose launcher did not say "ready" in time or had ended: run it in a fresh one. */
export const NOT_READY = 'not ready';

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
/** The launcher's line on fd 4 when the solution's process ends (launcher.py, `ending`): how, and what it relayed. */
const END_RECORD = /^(exit|signal) (\d+) cpu ([\d.]+) cpu_limit ([01]) out (\d+) err (\d+)$/;

interface CurrentTest {
  started: number;
  reused: boolean;
  output: BoundedOutput;
  tail: OutputTail;
  ready: boolean;
  stopped?: Stop;
  report?: string;
  /** Bytes of stdout and stderr received for this test; the end line says how many the launcher relayed. */
  outBytes: number;
  errBytes: number;
  timers: Array<{ cancel(): void }>;
  settle(): void;
}

/**
 * One answer's sandbox, for its tests one after another. The job (code, mode, limits; never an expected output)
 * goes on fd 3 once (and bwrap's seccomp filter on fd 5); each test's input goes on stdin as `<bytes>\n<input>`.
 * For each test the launcher writes one byte on fd 4 as it forks the solution's process (the deadline and the
 * memory poll start there), relays the solution's stdout (bounded) and stderr (its tail), and once that process
 * ends writes its line on fd 4: how it ended and how many bytes of each stream it relayed, which the test waits
 * for. Between tests the launcher kills every process the test left, empties the writable places and zeroes its
 * buffers (launcher.py, `clean`). The worker holding fd 4 open is the sandbox's lifeline: the launcher ends the
 * sandbox when it hangs up. A test that runs past its deadline, the output limit or the memory limit (summed over
 * the sandbox's processes) kills the whole sandbox, which then serves no further test.
 */
export class SandboxSession {
  private readonly child: ChildProcess;
  private readonly stdin: Writable;
  private readonly streams: Array<Readable | Writable | null>;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private killed = false;
  private tests = 0;
  private control = '';
  private init: number | undefined;
  private current: CurrentTest | undefined;
  private failure: SandboxFailure | undefined;
  private polling = false;
  private testTimeout = 0;

  constructor(
    private readonly launch: SandboxLaunch,
    job: SandboxJob,
  ) {
    const [command, ...args] = launch.argv;
    this.child = spawn(command!, args, {
      cwd: '/',
      // Nothing of the worker's environment: no credentials, no DATABASE_URL, no PATH.
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', launch.seccompFilter ? 'pipe' : 'ignore'],
      ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
    });
    const [stdin, stdout, stderr, jobChannel, readyChannel, filterChannel] = this.child.stdio as unknown as [
      Writable,
      Readable,
      Readable,
      Writable,
      Readable,
      Writable | null,
    ];
    this.stdin = stdin;
    this.streams = [stdin, stdout, stderr, jobChannel, readyChannel, filterChannel];
    readyChannel.on('data', (chunk: Buffer) => this.onControl(chunk));
    stdout.on('data', (chunk: Buffer) => {
      const test = this.current;
      if (!test) return;
      test.outBytes += chunk.length;
      if (!test.output.push(chunk)) this.stop('output_limit');
      else this.checkEnd();
    });
    stderr.on('data', (chunk: Buffer) => {
      const test = this.current;
      if (!test) return;
      test.errBytes += chunk.length;
      test.tail.push(chunk);
      this.checkEnd();
    });
    // The solution may never read its input, or close it: a write error is no failure of the sandbox.
    stdin.on('error', () => {});
    jobChannel.on('error', () => {});
    filterChannel?.on('error', () => {});
    this.child.on('error', (error) => {
      this.failure = new SandboxFailure(`cannot start ${command}: ${error.message}`, { cause: error });
      this.exit ??= { code: null, signal: null };
      this.current?.settle();
    });
    this.child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      const test = this.current;
      if (test) test.timers.push(timer(DRAIN_MS, () => test.settle()));
    });
    this.child.on('close', () => this.current?.settle());
    jobChannel.end(encodeJob(job));
    filterChannel?.end(launch.seccompFilter);
  }

  /** The tool's process (bwrap, unshare), whose child is the launcher. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the sandbox can take another test: it was neither killed nor has it ended. */
  get usable(): boolean {
    return !this.killed && this.exit === undefined && this.current === undefined;
  }

  /**
   * Runs one test: the input on stdin, then what the solution printed and how its process ended. The first test
   * of the sandbox throws `SandboxFailure` when the sandbox cannot start or ends before it is ready; a later one
   * resolves `NOT_READY` then (within `readyTimeoutMs`), for the caller to run it in a fresh sandbox.
   */
  run(input: string, timeoutMs: number, readyTimeoutMs = this.launch.setupTimeoutMs): Promise<TestRun | typeof NOT_READY> {
    if (!this.usable) return Promise.resolve(NOT_READY);
    const reused = this.tests++ > 0;
    this.testTimeout = timeoutMs;
    return new Promise((resolve, reject) => {
      let settled = false;
      const test: CurrentTest = {
        started: performance.now(),
        reused,
        output: new BoundedOutput(this.launch.maxOutputBytes),
        tail: new OutputTail(STDERR_TAIL),
        ready: false,
        outBytes: 0,
        errBytes: 0,
        timers: [],
        settle: () => {
          if (settled) return;
          settled = true;
          for (const each of test.timers) each.cancel();
          this.current = undefined;
          const elapsedMs = performance.now() - test.started;
          if (!test.ready) {
            this.kill();
            if (reused) return resolve(NOT_READY);
            const how = this.exit ? (this.exit.signal ?? `status ${this.exit.code}`) : 'no exit';
            return reject(
              this.failure ??
                new SandboxFailure(
                  `${this.launch.argv[0]} ended (${how}) before the sandbox was ready: ${test.tail.text().trim() || 'no error output'}`,
                ),
            );
          }
          if (test.stopped) return resolve({ kind: test.stopped, stderr: test.tail.text(), elapsedMs });
          const end = solutionEnd(test.report ?? '');
          // A sandbox that ended (or said nothing sensible) takes no further test.
          if (end.code === null && end.signal === null) this.kill();
          resolve({ kind: 'exited', ...end, stdout: test.output.bytes(), stderr: test.tail.text(), elapsedMs });
        },
      };
      this.current = test;
      if (this.failure || this.exit) return test.settle();
      // Both limits count the time this process ran, not a freeze of it and the sandbox under it (running-budget.ts):
      // a stalled worker must not judge a correct answer a timeout.
      test.timers.push(
        startRunningBudget(readyTimeoutMs, () => {
          if (!test.ready) test.settle();
        }),
      );
      const bytes = Buffer.from(input, 'utf8');
      this.stdin.write(`${bytes.length}\n`);
      this.stdin.write(bytes);
    });
  }

  /** Ends the sandbox, every process of it. */
  close(): void {
    this.kill();
    for (const stream of this.streams) stream?.destroy();
  }

  private kill(): void {
    if (this.killed) return;
    this.killed = true;
    if (this.child.pid !== undefined && this.exit === undefined) killSandbox(this.child.pid);
  }

  private stop(why: Stop): void {
    const test = this.current;
    if (!test || test.stopped) return;
    test.stopped = why;
    this.kill();
    test.timers.push(timer(DRAIN_MS, () => test.settle()));
  }

  // Per test, the ready byte, then (once the solution's process ends) the launcher's line saying how it ended.
  private onControl(chunk: Buffer): void {
    this.control += chunk.toString('latin1');
    const test = this.current;
    if (!test) return;
    if (!test.ready && this.control.startsWith('R')) {
      this.control = this.control.slice(1);
      test.ready = true;
      test.timers.push(startRunningBudget(this.testTimeout, () => this.stop('timeout')));
      test.timers.push(timer(this.testTimeout + FREEZE_ALLOWANCE_MS, () => this.stop('timeout')));
      // From the start, every MEMORY_POLL_MS: no window longer than that goes unseen.
      const poll = setInterval(() => void this.pollMemory(), MEMORY_POLL_MS);
      test.timers.push({ cancel: () => clearInterval(poll) });
    }
    const end = this.control.indexOf('\n');
    if (test.ready && end >= 0) {
      test.report = this.control.slice(0, end);
      this.control = this.control.slice(end + 1);
      this.checkEnd();
    } else if (this.control.length > 200) {
      test.report = '';
      this.checkEnd();
    }
  }

  /** Settles the current test once its end line and every byte it announces have arrived. */
  private checkEnd(): void {
    const test = this.current;
    if (!test || test.report === undefined || test.stopped) return;
    const [, , , , , out, err] = END_RECORD.exec(test.report) ?? [];
    if (out === undefined || (test.outBytes >= Number(out) && test.errBytes >= Number(err))) test.settle();
  }

  private async pollMemory(): Promise<void> {
    const test = this.current;
    const pid = this.child.pid;
    if (this.polling || !test || pid === undefined || this.exit || test.stopped || test.report !== undefined) return;
    this.polling = true;
    try {
      this.init ??= childrenOf(pid)[0];
      const held = this.init === undefined ? undefined : await sandboxMemoryBytes(this.init, this.launch.memoryLimitBytes);
      if (held !== undefined && held > this.launch.memoryLimitBytes && this.current === test) this.stop('memory_limit');
    } finally {
      this.polling = false;
    }
  }
}

function timer(ms: number, then: () => void): { cancel(): void } {
  const handle = setTimeout(then, ms);
  return { cancel: () => clearTimeout(handle) };
}

/** How the solution's process ended, from the launcher's line; nulls when the sandbox ended without one. */
function solutionEnd(report: string): { code: number | null; signal: NodeJS.Signals | null; cpuSeconds: number; cpuLimit: boolean } {
  const [, how, number, cpu, limit] = END_RECORD.exec(report) ?? [];
  if (how === undefined) return { code: null, signal: null, cpuSeconds: 0, cpuLimit: false };
  const value = Number(number);
  const signal = how === 'signal' ? ((Object.entries(constants.signals).find(([, n]) => n === value)?.[0] ?? `SIG${value}`) as NodeJS.Signals) : null;
  return { code: how === 'exit' ? value : null, signal, cpuSeconds: Number(cpu), cpuLimit: limit === '1' };
}

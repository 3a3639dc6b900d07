import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { HarnessJob, HarnessResult } from './harness-protocol.js';
import { SandboxFailure } from './sandbox-failure.js';

/** How one sandbox run ended, short of a sandbox failure (which throws). */
export type HarnessEnd =
  | { kind: 'finished' }
  /** The caller's `onResult` said stop: a test failed and the rest need not run. */
  | { kind: 'stopped' }
  | { kind: 'answer_timeout' }
  /** The harness died after it was ready: only the answer can have killed it. */
  | { kind: 'killed_by_answer'; detail: string };

export interface HarnessLaunch {
  argv: string[];
  cwd: string;
  uid?: number;
  gid?: number;
  answerTimeoutMs: number;
}

const STDERR_TAIL = 4000;

/**
 * Starts one sandboxed harness, feeds it the job and hands each test's result to `onResult` as it arrives
 * (return false to stop). The whole process group is killed on the answer's deadline, on stop and at the
 * end; the sandbox's PID namespace dies with it. Throws `SandboxFailure` when the sandbox cannot start or
 * dies before the harness is ready.
 */
export function runHarness(launch: HarnessLaunch, job: HarnessJob, onResult: (result: HarnessResult) => boolean): Promise<HarnessEnd> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = launch.argv;
    const child = spawn(command!, args, {
      cwd: launch.cwd,
      // Nothing of the worker's environment: no credentials, no DATABASE_URL, no PATH.
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(launch.uid === undefined ? {} : { uid: launch.uid, gid: launch.gid }),
    });
    let ready = false;
    let ended: HarnessEnd | null = null;
    let stderr = '';
    let expected = job.inputs.length;
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const end = (how: HarnessEnd): void => {
      ended ??= how;
      kill();
    };
    const timer = setTimeout(() => end({ kind: 'answer_timeout' }), launch.answerTimeoutMs);
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-STDERR_TAIL);
    });
    child.stdin.on('error', () => {
      // The harness died before reading its job; 'close' reports why.
    });
    createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      if (ended) return;
      const message = parseLine(line);
      if (message === 'ready') ready = true;
      else if (message === undefined || !ready || message.test !== job.inputs.length - expected) end({ kind: 'killed_by_answer', detail: `the harness printed an unreadable line: ${line.slice(0, 200)}` });
      else if (!onResult(message)) end({ kind: 'stopped' });
      else if (--expected === 0) end({ kind: 'finished' });
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new SandboxFailure(`cannot start ${command}: ${error.message}`, { cause: error }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      kill();
      if (ended) resolve(ended);
      else if (!ready) reject(new SandboxFailure(`${command} exited (${signal ?? `status ${code}`}) before the harness was ready: ${stderr.trim() || 'no error output'}`));
      else resolve({ kind: 'killed_by_answer', detail: `the sandbox ended (${signal ?? `status ${code}`}) before every test ran: ${stderr.trim().slice(-500)}` });
    });
    child.stdin.end(`${JSON.stringify(job)}\n`);
  });
}

function parseLine(line: string): 'ready' | HarnessResult | undefined {
  try {
    const value = JSON.parse(line) as Record<string, unknown>;
    if (value.ready === true) return 'ready';
    if (typeof value.test === 'number' && (value.status === 'ran' ? typeof value.stdout === 'string' : value.status === 'timeout' || value.status === 'runtime_error')) {
      return value as HarnessResult;
    }
  } catch {
    // Falls through: not a harness line.
  }
  return undefined;
}

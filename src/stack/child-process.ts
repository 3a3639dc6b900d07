import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { constants } from 'node:os';

/**
 * The one way Ratchet starts and stops the processes it runs (the Temporal servers, Postgres, vLLM, workers and
 * environments in tests and benchmarks): spawn tied to this process's life, stop with a signal then SIGKILL after a
 * bound, wait, and read the exit as a status.
 */

/** How a child ended: its code, or the signal that ended it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** True once the child process has exited or was killed. */
export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once the child has exited (at once if it already has). */
export function exitOf(child: ChildProcess): Promise<ChildExit> {
  if (exited(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** The shell's status for an exit: its code, or 128 + the signal's number (130 for SIGINT, 137 for SIGKILL, 143 for SIGTERM). */
export function exitStatus(exit: ChildExit): number {
  if (exit.code !== null) return exit.code;
  return 128 + (exit.signal ? (constants.signals[exit.signal] ?? 0) : 0);
}

export interface StopOptions {
  /** The first signal (SIGTERM unless given). */
  signal?: NodeJS.Signals;
  /** How long the child has after it before SIGKILL (10 s unless given). */
  graceMs?: number;
  /** Signal the child's whole process group (a child spawned `detached`, whose own children must go too). */
  group?: boolean;
}

/** Sends `signal` to the child, or to its group; a process already gone is not an error. */
export function signalChild(child: ChildProcess, signal: NodeJS.Signals, group = false): void {
  try {
    if (group && child.pid) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // already gone
  }
}

/**
 * Stops the child by its own PID (or group): `signal`, then SIGKILL once `graceMs` has passed, and waits for its
 * exit. A group is sent a last SIGKILL after the leader exits, for members that outlive it by a moment.
 */
export async function stopChild(child: ChildProcess, options: StopOptions = {}): Promise<ChildExit> {
  const exit = exitOf(child);
  if (exited(child)) return exit;
  signalChild(child, options.signal ?? 'SIGTERM', options.group);
  const timer = setTimeout(() => signalChild(child, 'SIGKILL', options.group), options.graceMs ?? 10_000);
  try {
    return await exit;
  } finally {
    clearTimeout(timer);
    if (options.group) signalChild(child, 'SIGKILL', true);
  }
}

/** `stopChild` with SIGTERM and a grace period: the shape most callers want. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  await stopChild(child, { graceMs });
}

let setpriv: string | null | undefined;

/** `setpriv` (util-linux) where it can set a parent-death signal: Linux only. */
function findSetpriv(): string | null {
  if (setpriv !== undefined) return setpriv;
  setpriv = null;
  if (process.platform !== 'linux') return setpriv;
  for (const candidate of ['/usr/bin/setpriv', '/bin/setpriv']) {
    if (spawnSync(candidate, ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0) return (setpriv = candidate);
  }
  return setpriv;
}

export interface TiedSpawnOptions extends SpawnOptions {
  /** What the child gets when this process dies, however it dies (SIGKILL included): SIGKILL unless given. */
  deathSignal?: NodeJS.Signals;
}

/**
 * Spawns a server this process owns so that it dies with this process, even when this process is SIGKILLed and
 * stops nothing: on Linux through `setpriv --pdeathsig` (the kernel's PR_SET_PDEATHSIG; `setpriv` execs the
 * command, so the PID is the server's own). Without `setpriv` (macOS) it is a plain spawn, and only a stop this
 * process gets to run takes the server down.
 */
export function spawnTied(command: string, args: readonly string[], options: TiedSpawnOptions = {}): ChildProcess {
  const { deathSignal = 'SIGKILL', ...spawnOptions } = options;
  const wrapper = findSetpriv();
  if (!wrapper) return spawn(command, args, spawnOptions);
  return spawn(wrapper, ['--pdeathsig', deathSignal.replace(/^SIG/, ''), '--', command, ...args], spawnOptions);
}

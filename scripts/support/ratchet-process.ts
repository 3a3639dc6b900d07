import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { exited, stopProcess } from '../../src/stack/child-process.js';
import { untilPolling } from '../../src/stack/worker-pollers.js';

/** The built CLI: worker processes run it as they would on a cluster. */
export const CLI = path.resolve(import.meta.dirname, '../../dist/cli/main.js');

/** A `node dist/cli/main.js …` process with its output kept, so a test can read what it printed. */
export interface RatchetProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
}

/** Starts `ratchet <args>` with `env` on top of this process's environment. */
export function startRatchet(args: string[], env: NodeJS.ProcessEnv): RatchetProcess {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Stops every process by its own PID: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopRatchets(processes: readonly RatchetProcess[], graceMs = 3_000): Promise<void> {
  await Promise.all(processes.map((p) => stopProcess(p.child, graceMs).catch(() => p.child.kill('SIGKILL'))));
}

/** Waits until Temporal lists the process (`pid@host`, the SDK's default identity) as a poller of its queue. */
export async function waitUntilPolling(client: Client, child: ChildProcess, kind: 'cpu' | 'gpu', timeoutMs = 120_000): Promise<void> {
  await untilPolling(client, child.pid!, kind, {
    timeoutMs,
    intervalMs: 200,
    abortIf: () => {
      if (exited(child)) throw new Error(`${kind} worker pid ${child.pid} exited before polling`);
    },
  });
}

/** Resolves once the process prints `marker` on stdout (the simulated policy announces its URL). */
export function waitForLine(child: ChildProcess, marker: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`pid ${child.pid}: no ${marker} within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = marker.exec(seen);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve(match);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`pid ${child.pid} exited (${code}) before printing ${marker}`)));
  });
}

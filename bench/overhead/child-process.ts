import { spawn } from 'node:child_process';
import path from 'node:path';
import { stopProcess } from '../../src/stack/child-process.js';

const CLI = path.resolve(import.meta.dirname, '../../dist/cli/main.js');

export interface RatchetProcess {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Runs `ratchet <args>` (the compiled CLI, as an operator runs it) in its own process and waits for the line
 * that says it is ready, so that its CPU time is its own and can be measured apart.
 */
export async function startRatchetProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<RatchetProcess> {
  // BENCH_NODE_OPTIONS reaches only the measured processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []), CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      if (ready.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`ratchet ${args.join(' ')} exited with ${code}: ${output}`)));
  });
  // Keep draining its output so it never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  return { pid: child.pid!, stop: () => stopProcess(child) };
}

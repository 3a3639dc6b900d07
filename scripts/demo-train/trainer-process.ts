import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { VLLM_PYTHON } from '../../src/stack/vllm-server.js';
import { stopProcess } from '../../src/stack/child-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const TRAINER = path.join(ROOT, 'examples/train/trainer.py');

/** One JSON line of examples/train/trainer.py: `prepared`, `step` or `done`. */
export type TrainerEvent = Record<string, unknown> & { event: string };

export interface TrainerRun {
  pid: number;
  /** Resolves with every event once the process exits 0; rejects with its stderr's tail otherwise. */
  done: Promise<TrainerEvent[]>;
  /** SIGTERM, then SIGKILL after `graceMs`, to this process only (by its pid). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Runs the trainer in the vLLM environment's python (torch, transformers, and the `ratchet_rollouts` package from
 * ./python), handing each JSON line it prints to `onEvent`.
 */
export function runTrainer(args: string[], env: Record<string, string>, onEvent: (event: TrainerEvent) => void = () => undefined): TrainerRun {
  const child: ChildProcess = spawn(VLLM_PYTHON, [TRAINER, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...env,
      PYTHONPATH: [process.env.PYTHONPATH, path.join(ROOT, 'python')].filter(Boolean).join(path.delimiter),
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      TRANSFORMERS_VERBOSITY: 'error',
    },
  });
  const events: TrainerEvent[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let event: TrainerEvent | undefined;
    try {
      event = JSON.parse(line) as TrainerEvent;
    } catch {
      process.stdout.write(`trainer: ${line}\n`);
    }
    if (event?.event) {
      events.push(event);
      onEvent(event);
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > 60) stderr.shift();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const done = exited.then((code) => {
    if (code !== 0) throw new Error(`trainer exited with ${code}:\n${stderr.join('\n')}`);
    return events;
  });
  return {
    pid: child.pid!,
    done,
    stop: (graceMs = 10_000) => stopProcess(child, graceMs),
  };
}

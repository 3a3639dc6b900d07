import { constants } from 'node:os';

/** The signals a command honours: Ctrl-C, and what `timeout`, `kill` and service managers send. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];

/** The shell's convention for a process ended by a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM). */
export function signalExitStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** The first SIGINT or SIGTERM from now on, by name. */
export function nextStopSignal(): Promise<StopSignal> {
  return new Promise((resolve) => {
    const handlers = STOP_SIGNALS.map(
      (signal) =>
        [
          signal,
          () => {
            for (const [other, handler] of handlers) process.off(other, handler);
            resolve(signal);
          },
        ] as const,
    );
    for (const [signal, handler] of handlers) process.on(signal, handler);
  });
}

/** Waits for `work` at most `boundMs`: true if it settled in time (a rejection counts as settled). */
export async function settlesWithin(work: Promise<unknown>, boundMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), boundMs);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface InterruptOptions {
  /** What the user is told on stderr after `ratchet: interrupted by SIGINT:` (what stays done, how to resume). */
  message: string;
  /** Takes down what the command started; cut short after `boundMs`. */
  cleanup?: () => Promise<void>;
  boundMs?: number;
}

/**
 * From now on the first SIGINT or SIGTERM ends the process promptly: the message, a cleanup bounded to `boundMs`
 * (a second signal skips what is left of it), then exit 128 + the signal's number. Returns the way to stop
 * listening (the command finished by itself). The Temporal SDK's own signal hooks are off for such commands
 * (src/logging.ts): they shut workers down and otherwise swallow the signal, so a client-only command never ended.
 */
export function exitOnInterrupt(options: InterruptOptions): () => void {
  let interrupted = false;
  const onSignal = (signal: StopSignal) => {
    const status = signalExitStatus(signal);
    if (interrupted) process.exit(status);
    interrupted = true;
    process.stderr.write(`\nratchet: interrupted by ${signal}: ${options.message}\n`);
    void settlesWithin(options.cleanup?.() ?? Promise.resolve(), options.boundMs ?? 10_000).then(() => process.exit(status));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  };
}

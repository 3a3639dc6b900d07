import { constants } from 'node:os';

/** The signals a command honours: Ctrl-C, and what `timeout`, `kill` and service managers send. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];

/** The shell's convention for a process ended by a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM). */
export function signalExitStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
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
    const bound = new Promise<void>((resolve) => setTimeout(resolve, options.boundMs ?? 10_000));
    void Promise.race([(options.cleanup?.() ?? Promise.resolve()).catch(() => undefined), bound]).then(() => process.exit(status));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  };
}

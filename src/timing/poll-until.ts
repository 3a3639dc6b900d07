/** A poll ran out of time: `what` it waited for, and the last value it saw (or the last error the check threw). */
export class PollTimeout extends Error {
  override readonly name = 'PollTimeout';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly lastSeen: unknown,
  ) {
    super(
      `timed out after ${timeoutMs} ms waiting for ${what}; last saw ${describe(lastSeen)}`,
      lastSeen instanceof Error ? { cause: lastSeen } : undefined,
    );
  }
}

export interface PollOptions<T> {
  /** What the poll waits for, in words: the timeout's message names it. */
  what: string;
  timeoutMs: number;
  /** Pause between checks (default 100 ms). */
  intervalMs?: number;
  /** Whether a value is the one waited for (default: truthy). */
  done?: (value: T) => boolean;
  /** Called before every check; throwing ends the poll at once (a process that exited will never serve). */
  abortIf?: () => void;
  /** Errors of `check` that end the poll at once, rethrown; any other counts as not done yet (default: none). */
  fatal?: (error: unknown) => boolean;
}

/**
 * Calls `check` every `intervalMs` until `done` holds for its value and resolves with that value. A check that
 * throws counts as not done (a server not yet listening refuses connections); once `timeoutMs` has passed it
 * throws `PollTimeout` with what it waited for and what it last saw.
 */
export async function pollUntil<T>(check: () => T | Promise<T>, options: PollOptions<T>): Promise<T> {
  const done = options.done ?? ((value: T) => Boolean(value));
  const deadline = Date.now() + options.timeoutMs;
  let lastSeen: unknown;
  for (;;) {
    options.abortIf?.();
    try {
      const value = await check();
      if (done(value)) return value;
      lastSeen = value;
    } catch (error) {
      if (options.fatal?.(error)) throw error;
      lastSeen = error;
    }
    if (Date.now() >= deadline) throw new PollTimeout(options.what, options.timeoutMs, lastSeen);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(options.intervalMs ?? 100, deadline - Date.now()))));
  }
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (value === undefined) return 'nothing';
  try {
    const text = JSON.stringify(value);
    return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}

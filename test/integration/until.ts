import { pollUntil } from '../../src/timing/poll-until.js';

/** Polls `condition` every `intervalMs` until it holds (src/timing/poll-until.ts); an error it throws ends the wait. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<void> {
  await pollUntil(condition, { what: String(condition), timeoutMs, intervalMs, fatal: () => true });
}

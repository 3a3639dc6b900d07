import { once } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * Waits until a full output drains or closes. The losing listener is removed (a long export would otherwise
 * pile up one 'close' listener per chunk).
 */
export async function drainedOrClosed(out: Writable): Promise<void> {
  const done = new AbortController();
  try {
    await Promise.race([once(out, 'drain', { signal: done.signal }), once(out, 'close', { signal: done.signal })]);
  } finally {
    done.abort();
  }
}

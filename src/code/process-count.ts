import { readdirSync, statSync } from 'node:fs';

/**
 * Processes on this machine owned by `uid` (from /proc). RLIMIT_NPROC counts every process of the user, so a
 * sandbox sharing the worker's uid (a worker not running as root) gets its limit on top of what already runs.
 */
export function processesOwnedBy(uid: number): number {
  let count = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (statSync(`/proc/${name}`).uid === uid) count++;
    } catch {
      // Gone since the listing.
    }
  }
  return count;
}

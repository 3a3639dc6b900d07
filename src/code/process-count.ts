import { readdirSync, readFileSync, statSync } from 'node:fs';

/**
 * Processes on this machine owned by `uid` (from /proc). RLIMIT_NPROC counts every process of the user, so a
 * sandbox sharing the worker's uid (a worker not running as root) gets its limit on top of what already runs.
 */
export function processesOwnedBy(uid: number): number {
  return pidsOwnedBy(uid).length;
}

/** Live (not zombie) processes owned by `uid`. */
export function pidsOwnedBy(uid: number, options: { live?: boolean } = {}): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (statSync(`/proc/${name}`).uid !== uid) continue;
      if (options.live) {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      }
      pids.push(Number(name));
    } catch {
      // Gone since the listing.
    }
  }
  return pids;
}

/**
 * Waits until nothing of a sandbox slot's own uid is alive. A process that left the answer's process group dies
 * with the sandbox's PID namespace, a moment after the sandbox itself: the slot is free again only then.
 * Whatever is still there after `graceMs` is killed by pid.
 */
export async function reapSlot(uid: number, graceMs = 2_000): Promise<void> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const pids = pidsOwnedBy(uid, { live: true });
    if (pids.length === 0) return;
    if (Date.now() > deadline) {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone since the listing.
        }
      }
      if (Date.now() > deadline + graceMs) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

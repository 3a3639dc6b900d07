import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';

// Where account ids live (system and people): a sandbox owner is drawn above them where the host maps such ids.
const HIGH_IDS: readonly [number, number] = [2 ** 30, 2 ** 31];
// A container often maps only 0–65535: then the top of that range, which accounts rarely use.
const CONTAINER_IDS: readonly [number, number] = [40_000, 65_534];

/**
 * Under root, each sandbox runs as a host uid and gid of its own, drawn at random: the solution is never the
 * host's root, even inside its user namespace, and no two worker processes need to agree on a range. Nothing
 * is killed by uid, so a collision only shares an id between two sandboxes that cannot see each other.
 * Otherwise the sandbox runs as the worker's uid, in user and PID namespaces of its own.
 */
export function sandboxOwner(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = mappedId('/proc/self/uid_map');
  const gid = mappedId('/proc/self/gid_map');
  return uid === undefined || gid === undefined ? {} : { uid, gid };
}

/** A random id inside the ids this process's user namespace maps, preferring the high range. */
function mappedId(mapFile: string): number | undefined {
  let ranges: Array<[number, number]>;
  try {
    ranges = readFileSync(mapFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const [inside, , count] = line.trim().split(/\s+/).map(Number);
        return [inside ?? 0, (inside ?? 0) + (count ?? 0)];
      });
  } catch {
    return undefined;
  }
  for (const [low, high] of [HIGH_IDS, CONTAINER_IDS]) {
    for (const [start, end] of ranges) {
      const from = Math.max(low, start);
      const to = Math.min(high, end);
      if (to - from > 1000) return randomInt(from, to);
    }
  }
  return undefined;
}

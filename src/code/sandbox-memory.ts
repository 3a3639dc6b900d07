import { readdirSync, readFileSync } from 'node:fs';

/**
 * The memory every process of a sandbox holds together (proportional set size, so pages a fork shares with
 * its parent count once), read from the host through the sandbox's own /proc: `/proc/<init>/root/proc`
 * lists the sandbox's processes and nothing else. Undefined when it cannot be read (the sandbox is gone).
 * RLIMIT_AS bounds each process; this is what bounds their sum, where no cgroup is delegated to the worker.
 */
export function sandboxMemoryBytes(init: number): number | undefined {
  const proc = `/proc/${init}/root/proc`;
  let names: string[];
  try {
    names = readdirSync(proc);
  } catch {
    return undefined;
  }
  let total = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const rollup = readFileSync(`${proc}/${name}/smaps_rollup`, 'utf8');
      const pss = /^Pss:\s+(\d+) kB$/m.exec(rollup);
      total += Number(pss?.[1] ?? 0) * 1024;
    } catch {
      // Gone since the listing, or a zombie with no memory left.
    }
  }
  return total;
}

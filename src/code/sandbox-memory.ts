import { readdir, readFile, statfs } from 'node:fs/promises';

/** The sandbox's writable tmpfs mounts: what a solution writes there is memory too. */
const TMPFS = ['tmp', 'sandbox', 'dev/shm'];

/**
 * The memory a sandbox holds, read from the host through the sandbox's own `/proc/<init>/root`: the proportional
 * set size of every process it lists (pages a fork shares with its parent count once), plus what its tmpfs
 * mounts (`/tmp`, `/sandbox`, `/dev/shm`) hold. Undefined when it cannot be read (the sandbox is gone).
 * With `limitBytes`, a sum of resident sizes under it is returned as is (it is never below the PSS sum).
 * RLIMIT_AS bounds each process; this is what bounds their sum, where no cgroup is delegated to the worker.
 * Every read is asynchronous: a process with a huge memory map (its `smaps_rollup` walks it) slows this poll,
 * never the worker's event loop, its deadlines or its heartbeats.
 */
export async function sandboxMemoryBytes(init: number, limitBytes?: number): Promise<number | undefined> {
  const root = `/proc/${init}/root`;
  let names: string[];
  try {
    names = await readdir(`${root}/proc`);
  } catch {
    return undefined;
  }
  const pids = names.filter((name) => /^\d+$/.test(name));
  const files = sum(
    await Promise.all(
      TMPFS.map(async (mount) => {
        const stats = await statfs(`${root}/${mount}`).catch(() => undefined);
        return stats === undefined ? 0 : (stats.blocks - stats.bfree) * stats.bsize;
      }),
    ),
  );
  // Resident sizes first (status: the kernel's counters, no walk): their sum is at least the PSS sum, so under
  // the limit it answers; only a sandbox near its limit pays for smaps_rollup, which walks each memory map.
  const resident = sum(
    await Promise.all(
      pids.map(async (pid) => {
        const status = await readFile(`${root}/proc/${pid}/status`, 'utf8').catch(() => '');
        return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024;
      }),
    ),
  );
  if (limitBytes !== undefined && resident + files <= limitBytes) return resident + files;
  const proportional = await Promise.all(
    pids.map(async (pid) => {
      const rollup = await readFile(`${root}/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
      return Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? 0) * 1024;
    }),
  );
  return sum(proportional) + files;
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

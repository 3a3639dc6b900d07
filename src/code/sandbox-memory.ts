import { readdir, readFile, statfs } from 'node:fs/promises';

/** The sandbox's writable tmpfs mounts: what a solution writes there is memory too. */
const TMPFS = ['tmp', 'sandbox', 'dev/shm'];

/**
 * The memory a sandbox holds, read from the host through the sandbox's own `/proc/<init>/root`: the proportional
 * set size of every process it lists (pages a fork shares with its parent count once), plus what its tmpfs
 * mounts (`/tmp`, `/sandbox`, `/dev/shm`) hold. Undefined when it cannot be read (the sandbox is gone).
 * RLIMIT_AS bounds each process; this is what bounds their sum, where no cgroup is delegated to the worker.
 * Every read is asynchronous: a process with a huge memory map (its `smaps_rollup` walks it) slows this poll,
 * never the worker's event loop, its deadlines or its heartbeats.
 */
export async function sandboxMemoryBytes(init: number): Promise<number | undefined> {
  const root = `/proc/${init}/root`;
  let names: string[];
  try {
    names = await readdir(`${root}/proc`);
  } catch {
    return undefined;
  }
  const processes = names.filter((name) => /^\d+$/.test(name)).map(async (name) => {
    const rollup = await readFile(`${root}/proc/${name}/smaps_rollup`, 'utf8').catch(() => '');
    return Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? 0) * 1024;
  });
  const files = TMPFS.map(async (mount) => {
    const stats = await statfs(`${root}/${mount}`).catch(() => undefined);
    return stats === undefined ? 0 : (stats.blocks - stats.bfree) * stats.bsize;
  });
  return (await Promise.all([...processes, ...files])).reduce((sum, bytes) => sum + bytes, 0);
}

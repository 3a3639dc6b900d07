import { readdir, readFile } from 'node:fs/promises';

// Every process this module froze and has not resumed yet, so a failing test can still thaw them all.
const frozen = new Set<number>();

/** Every process descended from `pid` (children, their children…), found in /proc by parent PID. */
export async function descendantsOf(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    // The command name is in parentheses and may hold spaces or parentheses itself: the fields follow the last ')'.
    const parent = Number(stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (Number.isInteger(parent)) children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/**
 * SIGSTOPs a process and every process under it, as a GC pause, CPU starvation or a VM migration would stall a
 * host. The parent stops first, so it forks no new child after its children are listed (Postgres's postmaster
 * starts a backend per connection: stopping only the postmaster leaves every open connection answering).
 * Returns the PIDs stopped, for `resumeProcesses`.
 */
export async function pauseProcessTree(pid: number): Promise<number[]> {
  signal(pid, 'SIGSTOP');
  const pids = [pid, ...(await descendantsOf(pid))];
  for (const child of pids.slice(1)) signal(child, 'SIGSTOP');
  return pids;
}

/** SIGCONTs the given processes (a process that has exited since is skipped). */
export function resumeProcesses(pids: readonly number[]): void {
  for (const pid of pids) signal(pid, 'SIGCONT');
}

/** Freezes the process tree for `ms`, then resumes it, whatever happened in between. */
export async function pauseFor(pid: number, ms: number): Promise<void> {
  const pids = await pauseProcessTree(pid);
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    resumeProcesses(pids);
  }
}

/** Resumes every process still frozen by this module: the `afterAll` of a stall test. */
export function resumeAllPaused(): void {
  resumeProcesses([...frozen]);
}

function signal(pid: number, name: 'SIGSTOP' | 'SIGCONT'): void {
  if (name === 'SIGSTOP') frozen.add(pid);
  else frozen.delete(pid);
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

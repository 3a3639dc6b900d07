import { readdirSync, readFileSync } from 'node:fs';

// Linux reports process times in clock ticks; CLK_TCK is 100 on every Linux this runs on.
const CLOCK_TICKS = 100;

/**
 * CPU seconds (user + system) used so far by a process and every process below it, including children that
 * already exited and were waited for (Postgres backends, for instance).
 */
export function treeCpuSeconds(rootPid: number): number {
  const processes = readProcesses();
  const below = new Set([rootPid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, { ppid }] of processes) {
      if (!below.has(pid) && below.has(ppid)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  let ticks = 0;
  for (const pid of below) ticks += processes.get(pid)?.ticks ?? 0;
  return ticks / CLOCK_TICKS;
}

function readProcesses(): Map<number, { ppid: number; ticks: number }> {
  const processes = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the command name (which may hold spaces): state, ppid, ..., utime, stime, cutime, cstime.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    processes.set(Number(entry), { ppid: Number(fields[1]), ticks });
  }
  return processes;
}

/** CPU seconds of named processes between two points. */
export class CpuMeter {
  private readonly start = new Map<string, number>();

  constructor(private readonly processes: Record<string, () => number>) {
    for (const [name, read] of Object.entries(processes)) this.start.set(name, read());
  }

  /** Seconds used by each process since the meter was made. */
  read(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.processes).map(([name, read]) => [name, read() - this.start.get(name)!]));
  }
}

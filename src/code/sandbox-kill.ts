import { readdirSync, readFileSync } from 'node:fs';

/** The processes whose parent is `parent`: its children file, else a scan of /proc (kernels without CONFIG_PROC_CHILDREN). */
export function childrenOf(parent: number): number[] {
  try {
    return readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter((pid) => pid !== '')
      .map(Number);
  } catch {
    // No children file: scan.
  }
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command (which may hold spaces and parentheses): state, then ppid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(name));
    } catch {
      // Gone since the listing.
    }
  }
  return children;
}

/**
 * Ends a sandbox for good. The tool's child is the PID namespace's init (the launcher, the solution's parent): killed from
 * outside, it cannot ignore SIGKILL, and its death makes the kernel kill every process of the namespace,
 * whatever it did to its process group, session, parent-death signal or stdio. It is killed while the tool
 * still lives, so its pid cannot have been reused; then the tool's own process group goes.
 */
export function killSandbox(toolPid: number): void {
  for (const init of childrenOf(toolPid)) signal(init);
  signal(-toolPid);
  signal(toolPid);
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

import { readdir, readFile, readlink } from 'node:fs/promises';

/** PIDs of the processes listening on 127.0.0.1:`port`, found through /proc (socket inode → fd). */
export async function listeningPids(port: number): Promise<number[]> {
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const table = await readFile('/proc/net/tcp', 'utf8');
  const inodes = new Set(
    table
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1] === hex && fields[3] === '0A')
      .map((fields) => `socket:[${fields[9]}]`),
  );
  if (inodes.size === 0) return [];
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => []);
    for (const fd of fds) {
      if (inodes.has(await readlink(`/proc/${entry}/fd/${fd}`).catch(() => ''))) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

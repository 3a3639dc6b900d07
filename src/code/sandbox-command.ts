import type { IsolationTool, SandboxConfig } from './sandbox-config.js';
import { FLOOR_CONFINEMENT_SOURCE } from './floor-confinement-source.js';
import { LAUNCHER_SOURCE } from './launcher-source.js';
import { interpreterTree } from './sandbox-job.js';

/** The descriptor on which bwrap reads the seccomp filter. */
export const SECCOMP_FD = 5;

/**
 * The argv that starts one answer's sandbox. Under either tool the launcher is the PID namespace's init (bwrap's
 * `--as-pid-1`; `unshare --fork`) and the solution its child: no other process shares the sandbox, and when
 * the worker kills that init (or the launcher ends) the kernel kills every process of the answer, however it
 * detached.
 */
export function sandboxArgv(tool: IsolationTool, config: SandboxConfig): string[] {
  // -I: no user site, no PYTHON* variables, no script directory on sys.path. -S: no site at start (half of Python's
  // start-up, mostly .pth hooks): the launcher gives the solution site-packages and exit/quit itself.
  if (tool === 'unshare') {
    // The floor: new user, network, PID, IPC, UTS and mount namespaces; the launcher builds the root itself.
    return [
      'unshare',
      '--user',
      '--map-root-user',
      '--net',
      '--pid',
      '--mount',
      '--ipc',
      '--uts',
      '--fork',
      '--kill-child',
      '--mount-proc',
      config.python,
      '-I',
      '-S',
      '-c',
      `${FLOOR_CONFINEMENT_SOURCE}\n${LAUNCHER_SOURCE}`,
    ];
  }
  const size = String(config.maxFileBytes);
  return [
    'bwrap',
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--as-pid-1',
    '--uid',
    '1000',
    '--gid',
    '1000',
    // The solution's seccomp filter, which bwrap reads from fd 5 and installs just before it starts Python.
    '--seccomp',
    String(SECCOMP_FD),
    // A read-only view of the system, and nothing of the worker: no /home, /root, /etc, /work or /run.
    '--ro-bind',
    '/usr',
    '/usr',
    ...systemLinks(),
    '--proc',
    '/proc',
    // Four device nodes on a read-only /dev: bwrap's own --dev is an uncapped tmpfs, memory no limit counts.
    '--size',
    '65536',
    '--tmpfs',
    '/dev',
    ...['null', 'zero', 'random', 'urandom'].flatMap((device) => ['--dev-bind', `/dev/${device}`, `/dev/${device}`]),
    '--symlink',
    '/proc/self/fd',
    '/dev/fd',
    '--symlink',
    '/proc/self/fd/0',
    '/dev/stdin',
    '--symlink',
    '/proc/self/fd/1',
    '/dev/stdout',
    '--symlink',
    '/proc/self/fd/2',
    '/dev/stderr',
    '--size',
    size,
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    // The writable places, each capped: the solution's own directory (in memory, gone with the sandbox) and /tmp.
    '--size',
    size,
    '--tmpfs',
    '/tmp',
    '--size',
    size,
    '--tmpfs',
    '/sandbox',
    '--chdir',
    '/sandbox',
    // The interpreter's own tree (a virtualenv: its site-packages; its python links into /usr), read-only, at its
    // own path: after the tmpfs mounts, so that a tree under /tmp stays visible. Nothing else of its parents shows.
    ...interpreterTree(config.python).flatMap((tree) => ['--ro-bind', tree, tree]),
    '--remount-ro',
    '/',
    '--setenv',
    'HOME',
    '/sandbox',
    '--setenv',
    'PATH',
    '/usr/bin:/bin',
    '--setenv',
    'LANG',
    'C.UTF-8',
    config.python,
    '-I',
    '-S',
    '-c',
    LAUNCHER_SOURCE,
  ];
}

// Debian's merged /usr: /bin, /lib and /lib64 are links into /usr.
function systemLinks(): string[] {
  return ['--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/sbin', '/sbin'];
}

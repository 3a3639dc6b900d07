import type { IsolationTool, SandboxConfig } from './sandbox-config.js';
import { FLOOR_CONFINEMENT_SOURCE } from './floor-confinement-source.js';
import { HARNESS_SOURCE } from './harness-source.js';

/** The argv that starts one sandboxed harness. */
export function sandboxArgv(tool: IsolationTool, config: SandboxConfig): string[] {
  // -I: no user site, no PYTHON* variables, no script directory on sys.path.
  const harness = [config.python, '-I', '-c', HARNESS_SOURCE];
  if (tool === 'unshare') {
    // The floor: new user, network, PID, IPC and mount namespaces (no network, a /proc of its own); the
    // harness itself then makes the system read-only, mounts a private /tmp and drops its capabilities.
    const confined = `${FLOOR_CONFINEMENT_SOURCE}\nconfine_floor(${config.maxFileBytes})\n${HARNESS_SOURCE}`;
    return ['unshare', '--user', '--map-root-user', '--net', '--pid', '--mount', '--ipc', '--uts', '--fork', '--kill-child', '--mount-proc', config.python, '-I', '-c', confined];
  }
  return [
    'bwrap',
    '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--clearenv',
    // A read-only view of the system, and nothing of the worker: no /home, /root, /etc, /work or /run.
    '--ro-bind', '/usr', '/usr',
    ...optionalSystemLinks(),
    ...pythonOutsideUsr(config.python),
    '--proc', '/proc', '--dev', '/dev',
    '--size', String(config.maxFileBytes), '--tmpfs', '/tmp',
    // The solution's own directory, in memory, gone with the sandbox.
    '--size', String(config.maxFileBytes), '--tmpfs', '/sandbox', '--chdir', '/sandbox',
    '--setenv', 'HOME', '/sandbox', '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'LANG', 'C.UTF-8',
    ...harness,
  ];
}

// Debian's merged /usr: /bin, /lib and /lib64 are links into /usr.
function optionalSystemLinks(): string[] {
  return ['--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/sbin', '/sbin'];
}

// An interpreter outside /usr (a venv, /opt) needs its own tree, read-only.
function pythonOutsideUsr(python: string): string[] {
  if (python.startsWith('/usr/')) return [];
  const root = python.split('/').slice(0, -2).join('/');
  return root === '' ? [] : ['--ro-bind', root, root];
}

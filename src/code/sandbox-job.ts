import type { IsolationTool, SandboxConfig } from './sandbox-config.js';
import { seccompFilter } from './seccomp-filter.js';

/**
 * What the launcher reads on fd 3 once per answer (as `encodeJob` writes it): the code, the mode and the
 * limits. The expected outputs never enter the sandbox; the test's input arrives on stdin.
 */
export interface SandboxJob {
  code: string;
  /** Empty: stdin/stdout mode. Set: call this method or function with the JSON arguments on stdin. */
  fnName: string;
  timeoutS: number;
  memoryMb: number;
  maxProcesses: number;
  maxFileBytes: number;
  maxOpenFiles: number;
  /** The seccomp filter, hex, for the launcher to install; empty where the tool installs it (bwrap's --seccomp). */
  seccomp: string;
  /** Under the `unshare` floor: what the launcher needs to build the sandbox's root itself. */
  floor: { extraTrees: string[]; pivotRootSyscall: number; capsetSyscall: number } | null;
}

// pivot_root and capset differ between the two architectures the filter knows.
const FLOOR_SYSCALLS: Record<string, { pivotRootSyscall: number; capsetSyscall: number }> = {
  x64: { pivotRootSyscall: 155, capsetSyscall: 126 },
  arm64: { pivotRootSyscall: 41, capsetSyscall: 91 },
};

/** The job for one answer's code under `tool`, with the row's limits and the pool's. */
export function sandboxJob(
  code: string,
  fnName: string,
  limits: { timeoutS: number; memoryMb: number },
  tool: IsolationTool,
  config: SandboxConfig,
): SandboxJob {
  const floorSyscalls = FLOOR_SYSCALLS[process.arch];
  if (!floorSyscalls) throw new RangeError(`the code sandbox runs on x64 and arm64, not ${process.arch}`);
  return {
    code,
    fnName,
    ...limits,
    maxProcesses: config.maxProcesses,
    maxFileBytes: config.maxFileBytes,
    maxOpenFiles: config.maxOpenFiles,
    seccomp: tool === 'unshare' ? seccompFilterHex() : '',
    floor: tool === 'unshare' ? { extraTrees: interpreterTree(config.python), ...floorSyscalls } : null,
  };
}

let filterHex: string | undefined;
const seccompFilterHex = (): string => (filterHex ??= seccompFilter().toString('hex'));

/**
 * The job as the launcher reads it: fields apart by NUL, the code last (it may hold anything, NUL included),
 * so that the launcher needs no json module, whose import would cost more than the rest of its start.
 */
export function encodeJob(job: SandboxJob): Buffer {
  const fields = [
    job.fnName,
    job.timeoutS,
    job.memoryMb,
    job.maxProcesses,
    job.maxFileBytes,
    job.maxOpenFiles,
    job.seccomp,
    job.floor ? JSON.stringify(job.floor) : '',
  ];
  return Buffer.concat([Buffer.from(fields.map(String).join('\0') + '\0', 'utf8'), Buffer.from(job.code, 'utf8')]);
}

/** An interpreter outside /usr (a venv, /opt) needs its own tree in the sandbox, read-only. */
export function interpreterTree(python: string): string[] {
  if (python.startsWith('/usr/')) return [];
  const root = python.split('/').slice(0, -2).join('/');
  return root === '' ? [] : [root];
}

import { availableParallelism } from 'node:os';
import { defaultCodePython } from './code-python.js';

/** Which isolation tool wraps the harness: bubblewrap where the machine has it, `unshare` as the floor. */
export type IsolationTool = 'bwrap' | 'unshare';

/** Limits and places of the code sandbox; every field has a default, and most an environment variable. */
export interface SandboxConfig {
  /** Sandboxes running at once in this process (`RATCHET_CODE_SANDBOXES`); default: available cores. */
  concurrency: number;
  /**
   * The Python 3 interpreter (`RATCHET_CODE_PYTHON`); default the state folder's `code-python` virtualenv (numpy,
   * made by `ratchet setup`), else /usr/bin/python3. Its tree is shown read-only in the sandbox.
   */
  python: string;
  /** Force one tool (`RATCHET_CODE_SANDBOX=bwrap|unshare`); default: bwrap when it runs, else unshare. */
  tool?: IsolationTool;
  /** Processes (and threads) per sandbox, counted in the sandbox's own user namespace; default 64. */
  maxProcesses: number;
  /** Largest file a solution may write, and the size of each of its tmpfs (/sandbox, /tmp, /dev/shm); default 16 MB. */
  maxFileBytes: number;
  /** Open files per process; it also bounds what pipe and socket buffers can hold outside the memory limit. Default 256. */
  maxOpenFiles: number;
  /** Stdout (or return value) a test may print before it counts as a runtime error; default 16 MB. Stderr is truncated, never counted. */
  maxOutputBytes: number;
  /** Cap on one answer's time in its sandboxes, all its tests together, in seconds (`RATCHET_CODE_ANSWER_TIMEOUT_S`); default 60. */
  answerTimeoutS: number;
}

/** The configuration from the environment, over the defaults. */
export function sandboxConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  const tool = env.RATCHET_CODE_SANDBOX;
  if (tool !== undefined && tool !== '' && tool !== 'bwrap' && tool !== 'unshare') {
    throw new RangeError(`RATCHET_CODE_SANDBOX must be "bwrap" or "unshare", got ${JSON.stringify(tool)}`);
  }
  return {
    concurrency: positive(env.RATCHET_CODE_SANDBOXES, 'RATCHET_CODE_SANDBOXES') ?? availableParallelism(),
    python: env.RATCHET_CODE_PYTHON || defaultCodePython(env),
    ...(tool ? { tool } : {}),
    maxProcesses: 64,
    maxFileBytes: 16 * 1024 * 1024,
    maxOpenFiles: 256,
    maxOutputBytes: 16 * 1024 * 1024,
    answerTimeoutS: positive(env.RATCHET_CODE_ANSWER_TIMEOUT_S, 'RATCHET_CODE_ANSWER_TIMEOUT_S') ?? 60,
  };
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new RangeError(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return number;
}

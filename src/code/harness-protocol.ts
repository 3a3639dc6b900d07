import type { CodeTests } from './types.js';

/** The job the harness reads on stdin. The expected outputs never enter the sandbox. */
export interface HarnessJob {
  code: string;
  fnName: string;
  inputs: string[];
  timeoutS: number;
  memoryMb: number;
  maxProcesses: number;
  maxFileBytes: number;
  maxOutputBytes: number;
}

/** One line the harness prints per test. `ran`: it exited 0, and `stdout` is what to compare. */
export type HarnessResult =
  | { test: number; status: 'ran'; stdout: string }
  | { test: number; status: 'timeout' | 'runtime_error'; error?: string };

export function harnessJob(code: string, tests: CodeTests, limits: Omit<HarnessJob, 'code' | 'fnName' | 'inputs'>): HarnessJob {
  return { code, fnName: tests.fnName, inputs: tests.inputs, ...limits };
}

import { matchOutput } from './compare-output.js';
import { matchReturn } from './compare-return.js';
import { extractCode } from './extract-code.js';
import { harnessJob, type HarnessResult } from './harness-protocol.js';
import { CodeSandboxPool } from './sandbox-pool.js';
import type { CodeTask, CodeVerdict } from './types.js';

/** AReaL's defaults for a row without `timeout` / `memory`. */
export const DEFAULT_TEST_TIMEOUT_S = 6;
export const DEFAULT_MEMORY_MB = 512;

export interface VerifyCodeOptions {
  /** The sandbox pool to run in; default one shared per process, configured from the environment. */
  sandbox?: CodeSandboxPool;
}

let shared: CodeSandboxPool | undefined;

/** The process's shared sandbox pool (`RATCHET_CODE_SANDBOXES` sandboxes at once). */
export function sharedCodeSandboxPool(): CodeSandboxPool {
  shared ??= new CodeSandboxPool();
  return shared;
}

/**
 * Runs the answer's last code block against every test case of the task in a sandbox and says whether all
 * pass. Tests run in order and the first failure decides the verdict (`wrong`, `timeout` or
 * `runtime_error`); an answer without a code block is `no_answer` and never reaches the sandbox. A sandbox
 * that cannot run throws `SandboxFailure`: an infrastructure failure, never a verdict.
 */
export async function verifyCodeAnswer(task: CodeTask, prediction: string, options: VerifyCodeOptions = {}): Promise<CodeVerdict> {
  const started = performance.now();
  const total = task.tests.inputs.length;
  const code = extractCode(prediction);
  const verdict = (fields: Omit<CodeVerdict, 'equal' | 'predicted' | 'total' | 'elapsedMs'>): CodeVerdict => ({
    equal: fields.status === 'correct', predicted: code, total, ...fields, elapsedMs: performance.now() - started,
  });
  if (code === null) return verdict({ status: 'no_answer', passed: 0, detail: 'no fenced code block of at least 20 characters' });

  const sandbox = options.sandbox ?? sharedCodeSandboxPool();
  const timeoutS = task.timeoutS ?? DEFAULT_TEST_TIMEOUT_S;
  const job = harnessJob(code, task.tests, {
    timeoutS, memoryMb: task.memoryMb ?? DEFAULT_MEMORY_MB,
    maxProcesses: sandbox.config.maxProcesses, maxFileBytes: sandbox.config.maxFileBytes, maxOutputBytes: sandbox.config.maxOutputBytes,
  });
  let passed = 0;
  let failure: CodeVerdict | undefined;
  const rules = new Set<string>();
  const end = await sandbox.run(job, (result: HarnessResult) => {
    const test = `test ${result.test + 1} of ${total}`;
    if (result.status !== 'ran') {
      failure = verdict({ status: result.status, passed, detail: `${test}: ${result.status === 'timeout' ? `ran past ${timeoutS} s` : 'crashed'}${result.error ? `: ${result.error.trim().slice(-600)}` : ''}` });
      return false;
    }
    const expected = task.tests.outputs[result.test] ?? '';
    const rule = task.tests.fnName ? matchReturn(result.stdout, expected) : matchOutput(result.stdout, expected);
    if (rule === null) {
      failure = verdict({ status: 'wrong', passed, detail: `${test}: expected ${preview(expected)}, got ${preview(result.stdout)}` });
      return false;
    }
    rules.add(rule);
    passed += 1;
    return true;
  });
  if (failure) return failure;
  if (end.kind === 'answer_timeout') return verdict({ status: 'timeout', passed, detail: `the answer ran past its overall limit after ${passed} of ${total} tests` });
  if (end.kind === 'killed_by_answer') return verdict({ status: 'runtime_error', passed, detail: end.detail });
  return verdict({ status: 'correct', passed, detail: `all ${total} tests passed (${[...rules].join(', ')})` });
}

function preview(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

import { extractCode } from './extract-code.js';
import { judgeRun } from './judge-run.js';
import type { CodeSandboxPool } from './sandbox-pool.js';
import type { CodeTask, CodeVerdict } from './types.js';

/** AReaL's defaults for a row without `timeout` / `memory`. */
export const DEFAULT_TEST_TIMEOUT_S = 6;
export const DEFAULT_MEMORY_MB = 512;

export interface VerifyCodeOptions {
  /** The sandbox pool to run in: the worker's, or the command's (`new CodeSandboxPool()` reads the environment). */
  sandbox: CodeSandboxPool;
}

/**
 * Runs the answer's last code block against every test case of the task in a sandbox and says whether all
 * pass. Tests run in order and the first failure decides the verdict (`wrong`, `timeout` or
 * `runtime_error`); an answer without a code block is `no_answer` and never reaches the sandbox. A sandbox
 * that cannot run throws `SandboxFailure`: an infrastructure failure, never a verdict.
 */
export async function verifyCodeAnswer(task: CodeTask, prediction: string, options: VerifyCodeOptions): Promise<CodeVerdict> {
  const started = performance.now();
  const total = task.tests.inputs.length;
  const code = extractCode(prediction);
  const verdict = (fields: Omit<CodeVerdict, 'equal' | 'predicted' | 'total' | 'elapsedMs'>): CodeVerdict => ({
    equal: fields.status === 'correct',
    predicted: code,
    total,
    ...fields,
    elapsedMs: performance.now() - started,
  });
  if (code === null) return verdict({ status: 'no_answer', passed: 0, detail: 'no fenced code block of at least 20 characters' });

  const { sandbox } = options;
  const timeoutS = task.timeoutS ?? DEFAULT_TEST_TIMEOUT_S;
  const answer = { code, fnName: task.tests.fnName, timeoutS, memoryMb: task.memoryMb ?? DEFAULT_MEMORY_MB };
  // The answer's overall budget counts time in its sandboxes, not time spent waiting for one.
  let budgetMs = Math.min(sandbox.config.answerTimeoutS, total * timeoutS + 5) * 1000;
  const rules = new Set<string>();
  // One sandbox for all its tests, each in a fresh fork of a clean launcher (`CodeSandboxPool.answer`).
  const tests = sandbox.answer(answer);
  try {
    return await runTests();
  } finally {
    tests.close();
  }

  async function runTests(): Promise<CodeVerdict> {
    for (let index = 0; index < total; index++) {
      const test = `test ${index + 1} of ${total}`;
      if (budgetMs <= 0)
        return verdict({ status: 'timeout', passed: index, detail: `the answer ran past its overall limit after ${index} of ${total} tests` });
      const overall = budgetMs < timeoutS * 1000;
      const run = await tests.run(task.tests.inputs[index] ?? '', Math.min(timeoutS * 1000, budgetMs));
      budgetMs -= run.elapsedMs;
      const outcome = judgeRun(run, task.tests.outputs[index] ?? '', task.tests.fnName !== '');
      if (outcome.status !== 'passed') {
        const why = outcome.status === 'timeout' && overall ? 'the answer ran past its overall limit' : outcome.detail;
        return verdict({ status: outcome.status, passed: index, detail: `${test}: ${why}` });
      }
      rules.add(outcome.rule);
    }
    return verdict({ status: 'correct', passed: total, detail: `all ${total} tests passed (${[...rules].join(', ')})` });
  }
}

import { parseTests, SandboxFailure, verifyCodeAnswer, type CodeSandboxPool, type CodeVerdict } from '../code/index.js';

type CodeLineVerdict = Omit<CodeVerdict, 'status'> & { status: CodeVerdict['status'] | 'error' };

/**
 * For a `ratchet verify` line with `"task": "code"`: `{"task": "code", "input_output": "<JSON string>",
 * "pred": "<model output>", "timeout": s, "memory": MB}` runs the answer's code against the tests and
 * resolves with its verdict (run in the pool `sandbox` gives, made at the first code line); undefined for any other line (math). An invalid code line, or a sandbox that
 * cannot run, resolves with status `error` and why, as an invalid math line does.
 */
export function verifyCodeLine(text: string, sandbox: () => CodeSandboxPool): Promise<CodeLineVerdict> | undefined {
  if (!text.includes('"task"')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const row = value as { task?: unknown; input_output?: unknown; pred?: unknown; timeout?: unknown; memory?: unknown } | null;
  if (typeof row !== 'object' || row === null || row.task !== 'code') return undefined;
  const error = (detail: string, elapsedMs = 0): CodeLineVerdict => ({
    equal: false,
    status: 'error',
    predicted: null,
    passed: 0,
    total: 0,
    detail,
    elapsedMs,
  });
  const tests = parseTests(row.input_output);
  if (!tests.ok) return Promise.resolve(error(`invalid code line: ${tests.message}`));
  if (typeof row.pred !== 'string') return Promise.resolve(error('invalid code line: "pred" must be a string'));
  for (const [name, limit] of [
    ['timeout', row.timeout],
    ['memory', row.memory],
  ] as const) {
    if (limit !== undefined && !(typeof limit === 'number' && limit > 0))
      return Promise.resolve(error(`invalid code line: "${name}" must be a positive number`));
  }
  const task = {
    tests: tests.tests,
    ...(typeof row.timeout === 'number' ? { timeoutS: row.timeout } : {}),
    ...(typeof row.memory === 'number' ? { memoryMb: row.memory } : {}),
  };
  return verifyCodeAnswer(task, row.pred, { sandbox: sandbox() }).catch((failure: unknown) => {
    if (failure instanceof SandboxFailure) return error(failure.message);
    throw failure;
  });
}

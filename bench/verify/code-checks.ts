import { loadavg } from 'node:os';
import { CodeSandboxPool } from '../../src/code/sandbox-pool.js';
import type { IsolationTool } from '../../src/code/sandbox-config.js';
import type { CodeTask } from '../../src/code/types.js';
import { verifyCodeAnswer } from '../../src/code/verify-code.js';

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

const FIVE_TESTS: CodeTask = {
  tests: {
    inputs: ['1 2\n', '-5 5\n', '1000000000 1000000000\n', '0 0\n', '-7 -8\n'],
    outputs: ['3\n', '0\n', '2000000000\n', '0\n', '-15\n'],
    fnName: '',
  },
};
const CORRECT = '```python\na, b = map(int, input().split())\nprint(a + b)\n```';

/**
 * The code part of `npm run bench:verify`: latency (p50/p99) of one correct 5-test answer checked alone,
 * then checks/s with the pool full (`RATCHET_CODE_SANDBOXES` sandboxes at once), each beside the machine's load
 * (1-minute average) before and after: on a shared machine a figure means nothing without it.
 */
export async function benchCode(sequential = 60, parallel = 120, only?: IsolationTool): Promise<void> {
  const sandbox = new CodeSandboxPool(only ? { tool: only } : {});
  const tool = await sandbox.tool();
  for (let i = 0; i < 3; i++) await verifyCodeAnswer(FIVE_TESTS, CORRECT, { sandbox });
  const latencies: number[] = [];
  for (let i = 0; i < sequential; i++) {
    const verdict = await verifyCodeAnswer(FIVE_TESTS, CORRECT, { sandbox });
    if (verdict.status !== 'correct') throw new Error(`benchmark answer scored ${verdict.status}: ${verdict.detail}`);
    latencies.push(verdict.elapsedMs);
  }
  const sorted = latencies.sort((a, b) => a - b);
  const loadBefore = load();
  const started = performance.now();
  const verdicts = await Promise.all(Array.from({ length: parallel }, () => verifyCodeAnswer(FIVE_TESTS, CORRECT, { sandbox })));
  const seconds = (performance.now() - started) / 1000;
  const wrong = verdicts.filter((verdict) => verdict.status !== 'correct').length;
  console.log(`\ncode (${tool} sandbox, ${sandbox.config.concurrency} at once; a correct 5-test stdin answer):`);
  console.log(`  one at a time: p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms (${sequential} checks)`);
  console.log(
    `  pool full: ${(parallel / seconds).toFixed(1)} checks/s, ${((5 * parallel) / seconds).toFixed(0)} test runs/s (${parallel} checks, ${wrong} not correct), load ${loadBefore} → ${load()}`,
  );
}

const load = (): string => loadavg()[0]!.toFixed(1);

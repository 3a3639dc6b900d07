import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adversarialCases } from '../../bench/verify/case-sets.js';
import { checkAnswer, VerifierPool } from '../../src/verifier/index.js';
import { ensureWorkerBuilt } from './built-worker.js';

const BUDGET_MS = 3000;
// A pool with a 1 s budget in a process of its own: "ready" once warm, then one verdict (JSON) per "check" line.
const FROZEN_POOL_SCRIPT = `
  import { createInterface } from 'node:readline';
  import { VerifierPool } from ${JSON.stringify(new URL('../../dist/verifier/index.js', import.meta.url).href)};
  const pool = new VerifierPool({ size: 1, budgetMs: 1000 });
  await pool.verify('1', '\\\\boxed{1}');
  const gold = Array.from({ length: 1000 }, (_, k) => 'x^{' + (k + 2) + '} + ' + k);
  console.log('ready');
  for await (const line of createInterface({ input: process.stdin })) console.log(JSON.stringify(await pool.verify(gold, '\\\\boxed{x}')));
`;
// Scheduling slack on a loaded 2-core machine (465 ms past a 300 ms budget measured at load average 8); a check that
// runs to its end takes seconds to minutes, so the bound still tells an enforced budget from none.
const OVERRUN_MS = 400;

describe('VerifierPool', () => {
  let pool: VerifierPool;
  beforeAll(() => {
    ensureWorkerBuilt();
    pool = new VerifierPool({ budgetMs: BUDGET_MS });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('gives the same verdict as checkAnswer, with the elapsed time', async () => {
    const verdict = await pool.verify('\\frac{1}{2}', 'so $\\boxed{0.5}$');
    const { status, equal, predicted, gold } = checkAnswer('\\frac{1}{2}', 'so $\\boxed{0.5}$');
    expect(verdict).toMatchObject({ status, equal, predicted, gold });
    expect(verdict.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('returns every adversarial input within its budget', async () => {
    for (const c of adversarialCases()) {
      const started = performance.now();
      const verdict = await pool.verify(c.gold, c.pred);
      const wall = performance.now() - started;
      expect(['wrong', 'no_answer', 'timeout'], c.name).toContain(verdict.status);
      expect(wall, c.name).toBeLessThan(BUDGET_MS + OVERRUN_MS);
    }
  });

  it('runs checks concurrently and keeps each verdict with its check', async () => {
    const verdicts = await Promise.all(Array.from({ length: 50 }, (_, k) => pool.verify(String(k), `\\boxed{${k % 2 === 0 ? k : k + 1}}`)));
    verdicts.forEach((v, k) => expect(v.status).toBe(k % 2 === 0 ? 'correct' : 'wrong'));
  });
});

describe('VerifierPool budget', () => {
  it('terminates an overrunning check, reports timeout and replaces the thread', async () => {
    ensureWorkerBuilt();
    const pool = new VerifierPool({ size: 1, budgetMs: 300 });
    try {
      await pool.verify('1', '\\boxed{1}');
      const slow = Array.from({ length: 50_000 }, (_, k) => `x^{${k + 2}} + ${k}`);
      const started = performance.now();
      const verdict = await pool.verify(slow, '\\boxed{x}');
      expect(verdict.status).toBe('timeout');
      expect(verdict.equal).toBe(false);
      expect(verdict.predicted).toBe('x');
      expect(performance.now() - started).toBeLessThan(300 + OVERRUN_MS);
      expect(await pool.verify('2', '\\boxed{2}')).toMatchObject({ status: 'correct' });
    } finally {
      await pool.close();
    }
  });

  it("does not count a frozen process against a check: SIGSTOP mid-check, the verdict is still the answer's", { timeout: 30_000 }, async () => {
    ensureWorkerBuilt();
    // A process of its own, so the test can freeze it (and its verifier thread) as a stalled CPU worker is frozen.
    const child = spawn(process.execPath, ['--input-type=module', '-e', FROZEN_POOL_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe('ready');
      child.stdin!.write('check\n');
      // A check of ~0.3 s of work against a 1 s budget, frozen 3 s from its start: on resume the budget's timer
      // is long due while the thread still has work left. A stall is not the check's time.
      await new Promise((resolve) => setTimeout(resolve, 50));
      process.kill(child.pid!, 'SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      process.kill(child.pid!, 'SIGCONT');
      expect(JSON.parse((await lines.next()).value as string)).toMatchObject({ status: 'wrong', predicted: 'x' });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('still ends a check that overruns its budget after a stall', async () => {
    ensureWorkerBuilt();
    const pool = new VerifierPool({ size: 1, budgetMs: 300 });
    try {
      await pool.verify('1', '\\boxed{1}');
      const slow = Array.from({ length: 50_000 }, (_, k) => `x^{${k + 2}} + ${k}`);
      const verdict = pool.verify(slow, '\\boxed{x}');
      const frozenUntil = performance.now() + 2_000;
      while (performance.now() < frozenUntil) {
        /* frozen */
      }
      const resumed = performance.now();
      expect(await verdict).toMatchObject({ status: 'timeout', equal: false });
      expect(performance.now() - resumed).toBeLessThan(300 + OVERRUN_MS);
    } finally {
      await pool.close();
    }
  });

  it('answers error after close instead of hanging', async () => {
    ensureWorkerBuilt();
    const pool = new VerifierPool({ size: 1 });
    await pool.close();
    expect(await pool.verify('1', '\\boxed{1}')).toMatchObject({ status: 'error', equal: false });
  });
});

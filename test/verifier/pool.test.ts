import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adversarialCases } from '../../src/verifier/bench-sets.js';
import { checkAnswer, VerifierPool } from '../../src/verifier/index.js';
import { ensureWorkerBuilt } from './built-worker.js';

const BUDGET_MS = 3000;
const OVERRUN_MS = 100;

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

  it('answers error after close instead of hanging', async () => {
    ensureWorkerBuilt();
    const pool = new VerifierPool({ size: 1 });
    await pool.close();
    expect(await pool.verify('1', '\\boxed{1}')).toMatchObject({ status: 'error', equal: false });
  });
});

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { expectSeedInvariants } from '../../scripts/support/seed-invariants.js';

const MIXED = path.resolve(import.meta.dirname, '../../data/mixed-sample.jsonl');

let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  stack = await startTestStack({ seed: 13 }, MIXED);
  stopWorkers = await stack.startWorkers();
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

describe('a dataset mixing math and code problems', () => {
  it('runs both through the same turn loop: code answers judged in the sandbox, rows passing the seed invariants', { timeout: 180_000 }, async () => {
    const code = stack.problems.filter((problem) => problem.code);
    const math = stack.problems.filter((problem) => !problem.code);
    expect(code.length).toBeGreaterThan(0);
    expect(math.length).toBeGreaterThan(0);
    const results = await runRollouts(stack.client, trajectoryRequests('mixed', stack.problems, 1, { turns: 2 }));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'completed'));

    const rows = await stack.exported('mixed/');
    expect(rows).toHaveLength(stack.problems.length);
    for (const row of rows) expectSeedInvariants(row, stack.tokenizer);

    // Code turns carry code verdicts, and the stored text of a correct one holds the code that ran.
    const codeQids = new Set(code.map((problem) => problem.qid));
    const { rows: turns } = await stack.pool.query<{ qid: string; verdict: string; extracted_answer: string | null }>(
      `SELECT t.qid, x.verdict, x.extracted_answer FROM turn_texts x JOIN trajectories t USING (trajectory_id) WHERE t.trajectory_id LIKE 'mixed/%'`,
    );
    const codeTurns = turns.filter((turn) => codeQids.has(turn.qid));
    expect(codeTurns).toHaveLength(code.length * 2);
    expect(codeTurns.some((turn) => turn.verdict === 'correct')).toBe(true);
    expect(codeTurns.some((turn) => turn.verdict !== 'correct')).toBe(true);
    for (const turn of codeTurns) expect(['correct', 'wrong', 'no_answer', 'timeout', 'runtime_error']).toContain(turn.verdict);
    expect(codeTurns.filter((turn) => turn.verdict === 'correct').every((turn) => /def |print|input/.test(turn.extracted_answer ?? ''))).toBe(true);
    // Math turns keep the math verifier's verdicts.
    const mathTurns = turns.filter((turn) => !codeQids.has(turn.qid));
    expect(mathTurns.every((turn) => ['correct', 'wrong', 'no_answer'].includes(turn.verdict))).toBe(true);
    // The success flags the trainer sees agree with the verdicts.
    const byQid = new Map(results.map((r) => [r.qid, r]));
    for (const problem of code) {
      const result = byQid.get(problem.qid)!;
      expect(result.turns.map((t) => t.success)).toEqual(result.turns.map((t) => t.verdict === 'correct'));
    }
  });
});

import { PassThrough, Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { runVerifyCommand } from '../../src/cli/verify-command.js';
import { ensureWorkerBuilt } from './built-worker.js';

async function run(
  lines: string[],
  extraction?: 'stated' | 'math-verify',
): Promise<{ result: { lines: number; invalid: number }; out: Array<Record<string, unknown>> }> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk));
  const result = await runVerifyCommand(Readable.from([lines.join('\n')]), output, { budgetMs: 3000, extraction });
  const out = Buffer.concat(chunks)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { result, out };
}

describe('ratchet verify', () => {
  beforeAll(() => ensureWorkerBuilt());

  it('writes one verdict line per input line, in input order', async () => {
    const inputs = Array.from({ length: 40 }, (_, k) => JSON.stringify({ gold: String(k), pred: `\\boxed{${k % 3 === 0 ? k + 1 : k}}` }));
    const { result, out } = await run(inputs);
    expect(result).toEqual({ lines: 40, invalid: 0 });
    out.forEach((verdict, k) => {
      expect(verdict.line).toBe(k + 1);
      expect(verdict.status).toBe(k % 3 === 0 ? 'wrong' : 'correct');
      expect(verdict.equal).toBe(k % 3 !== 0);
      expect(verdict.gold).toEqual([String(k)]);
    });
  });

  it('reports extracted answers and no_answer', async () => {
    const { out } = await run([JSON.stringify({ gold: ['3', '4'], pred: 'The answer is 4.' }), JSON.stringify({ gold: '5', pred: 'no idea' })]);
    expect(out[0]).toMatchObject({ status: 'correct', equal: true, predicted: '4', gold: ['3', '4'] });
    expect(out[1]).toMatchObject({ status: 'no_answer', equal: false, predicted: null });
  });

  it('reports an invalid line with its line number and carries on', async () => {
    const { result, out } = await run([
      JSON.stringify({ gold: '1', pred: '\\boxed{1}' }),
      'not json',
      '',
      '{"gold": 5, "pred": "x"}',
      JSON.stringify({ gold: '2', pred: '\\boxed{2}' }),
    ]);
    expect(result).toEqual({ lines: 4, invalid: 2 });
    expect(out.map((v) => [v.line, v.status])).toEqual([
      [1, 'correct'],
      [2, 'error'],
      [4, 'error'],
      [5, 'correct'],
    ]);
    expect(String(out[1]!.detail)).toContain('line 2');
  });

  it('compares a bare answer directly, and reads a last math span in prose only with --extraction math-verify', async () => {
    const lines = [JSON.stringify({ gold: '1000', pred: '1,000' }), JSON.stringify({ gold: '7', pred: 'Adding the two counts gives $7$.' })];
    const stated = await run(lines);
    expect(stated.out.map((v) => v.status)).toEqual(['correct', 'no_answer']);
    const compatible = await run(lines, 'math-verify');
    expect(compatible.out.map((v) => [v.status, v.predicted])).toEqual([
      ['correct', '1,000'],
      ['correct', '7'],
    ]);
  });
});

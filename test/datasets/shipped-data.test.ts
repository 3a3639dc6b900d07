import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/datasets/index.js';

const at = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));

describe('the shipped sample', () => {
  it('loads 40 problems with zero errors, GSM8K and MATH shapes alike', async () => {
    const { problems, errors } = await loadDataset(at('../../data/sample.jsonl'));
    expect(errors.map(String)).toEqual([]);
    expect(problems).toHaveLength(40);
    expect(problems.filter((problem) => problem.source === 'gsm8k')).toHaveLength(20);
    expect(problems.filter((problem) => problem.source === 'math')).toHaveLength(20);
    expect(problems[1]?.qid).toBe('sample/algebra/1');
  });
});

// The public sets live beside the project in ../shared; they are inputs, not fixtures.
describe('the public sets in ../shared/data', () => {
  it('load GSM8K test with zero errors', async () => {
    const { problems, errors } = await loadDataset(at('../../../shared/data/gsm8k_test.jsonl'));
    expect(errors.map(String)).toEqual([]);
    expect(problems).toHaveLength(1319);
    expect(new Set(problems.map((problem) => problem.qid)).size).toBe(1319);
  });

  it('load MATH-500 with zero errors', async () => {
    const { problems, errors } = await loadDataset(at('../../../shared/data/math500.jsonl'));
    expect(errors.map(String)).toEqual([]);
    expect(problems).toHaveLength(500);
    expect(problems[0]?.qid).toBe('test/precalculus/807.json');
  });
});

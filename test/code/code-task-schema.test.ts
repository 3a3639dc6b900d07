import { describe, expect, it } from 'vitest';
import { codeTaskSchema } from '../../src/code/index.js';
import { parseDatasetText } from '../../src/datasets/index.js';

describe('the code task schema for trajectory requests', () => {
  it('accepts every code task the loader makes', () => {
    const row = {
      task: 'code',
      query_id: 'q',
      prompt: 'p',
      input_output: JSON.stringify({ inputs: ['1'], outputs: ['1'], fn_name: 'f' }),
      timeout: 2,
    };
    const [problem] = parseDatasetText(JSON.stringify(row), 'code.jsonl').problems;
    expect(codeTaskSchema.parse(problem?.code)).toEqual({ tests: { inputs: ['1'], outputs: ['1'], fnName: 'f' }, timeoutS: 2 });
  });

  it('rejects mismatched lists, NUL, a bad function name and unknown keys', () => {
    const tests = { inputs: ['1'], outputs: ['1'], fnName: '' };
    expect(codeTaskSchema.safeParse({ tests: { ...tests, outputs: [] } }).success).toBe(false);
    expect(codeTaskSchema.safeParse({ tests: { ...tests, inputs: ['\u0000'] } }).success).toBe(false);
    expect(codeTaskSchema.safeParse({ tests: { ...tests, fnName: 'a b' } }).success).toBe(false);
    expect(codeTaskSchema.safeParse({ tests, timeout: 3 }).success).toBe(false);
    expect(codeTaskSchema.safeParse({ tests, memoryMb: 256 }).success).toBe(true);
  });
});

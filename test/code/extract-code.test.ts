import { describe, expect, it } from 'vitest';
import { extractCode } from '../../src/code/extract-code.js';
import { parseTests } from '../../src/code/input-output.js';

describe('code extraction', () => {
  it('takes the last python, py or bare block of at least 20 characters', () => {
    const answer = 'First try:\n```python\nprint(input())  # v1 of the answer\n```\nBetter:\n```py\nprint(int(input()) * 2)\n```\n';
    expect(extractCode(answer)).toBe('print(int(input()) * 2)');
    expect(extractCode('```\nimport sys\nprint(sys.stdin.read())\n```')).toBe('import sys\nprint(sys.stdin.read())');
  });

  it('skips short blocks and other languages', () => {
    expect(extractCode('```python\nprint(1)\n```')).toBeNull();
    expect(extractCode('```python\nprint(int(input()) + 1)\n```\n```python\nx=1\n```')).toBe('print(int(input()) + 1)');
    expect(extractCode('```cpp\nint main() { return 0; }\n```')).toBeNull();
  });

  it('finds no answer in prose', () => {
    expect(extractCode('The answer is print(input()) in Python.')).toBeNull();
  });
});

describe('input_output decoding', () => {
  it('decodes stdin and LeetCode tests', () => {
    expect(parseTests('{"inputs": ["1\\n"], "outputs": ["1"]}')).toEqual({ ok: true, tests: { inputs: ['1\n'], outputs: ['1'], fnName: '' } });
    expect(parseTests({ inputs: ['[1]'], outputs: ['1'], fn_name: 'f' })).toEqual({
      ok: true,
      tests: { inputs: ['[1]'], outputs: ['1'], fnName: 'f' },
    });
  });

  it('says what is wrong with a malformed one', () => {
    expect(parseTests('{"inputs": [')).toMatchObject({ ok: false, message: expect.stringContaining('not valid JSON') });
    expect(parseTests('{"inputs": ["1"], "outputs": ["1", "2"]}')).toMatchObject({ ok: false, message: '"input_output" has 1 inputs but 2 outputs' });
    expect(parseTests('{"inputs": [1], "outputs": ["1"]}')).toMatchObject({
      ok: false,
      message: '"input_output.inputs[0]" must be a string, got number',
    });
    expect(parseTests('{"inputs": [], "outputs": []}')).toMatchObject({ ok: false, message: '"input_output" has no test cases' });
    expect(parseTests('{"inputs": ["1"], "outputs": ["1"], "fn_name": "a b"}')).toMatchObject({ ok: false });
  });
});

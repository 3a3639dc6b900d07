import { describe, expect, it } from 'vitest';
import { matchOutput } from '../../src/code/compare-output.js';
import { matchReturn } from '../../src/code/compare-return.js';

describe('stdout comparison, strictest rule first', () => {
  it('accepts output equal after stripping', () => {
    expect(matchOutput('42\n', '42')).toBe('exact');
    expect(matchOutput('  a b\nc  \n\n', 'a b\nc')).toBe('exact');
  });

  it('accepts lists of stripped lines', () => {
    expect(matchOutput('1 2  \n  3\n', '1 2\n3')).toBe('lines');
    expect(matchOutput('1\r\n2\r\n', '1\n2')).toBe('exact');
  });

  it('accepts output that differs only in empty lines', () => {
    expect(matchOutput('1\n\n2\n', '1\n2')).toBe('non_empty_lines');
  });

  it('accepts floats within numpy allclose tolerance, and only then', () => {
    expect(matchOutput('0.3333333', '0.33333333333')).toBe('close_floats');
    expect(matchOutput('1e-9', '0')).toBe('close_floats');
    expect(matchOutput('100000.5', '100000')).toBe('close_floats');
    expect(matchOutput('100002', '100000')).toBeNull();
    expect(matchOutput('0.34', '0.3333')).toBeNull();
    expect(matchOutput('nan 1', 'nan 1.0')).toBeNull();
  });

  it('accepts each line as a set of tokens', () => {
    expect(matchOutput('3 1 2\nb a', '1 2 3\na b')).toBe('token_sets');
    expect(matchOutput('3 1 2\nb a', '1 2 3\na c')).toBeNull();
    expect(matchOutput('a b\nc', 'a b c')).toBeNull();
  });

  it('rejects a wrong answer', () => {
    expect(matchOutput('YES', 'NO')).toBeNull();
    expect(matchOutput('', '0')).toBeNull();
  });
});

describe('LeetCode return comparison', () => {
  it('compares JSON values, numbers by tolerance', () => {
    expect(matchReturn('[0, 1]', '[0,1]')).toBe('json_equal');
    expect(matchReturn('2.00000001', '2')).toBe('json_equal');
    expect(matchReturn('{"a": [1, 2]}', '{"a":[1,2]}')).toBe('json_equal');
    expect(matchReturn('true', 'false')).toBeNull();
    expect(matchReturn('[1, 0]', '[0, 1]')).toBeNull();
  });

  it('falls back to the stdout rules when the expected output is not JSON', () => {
    expect(matchReturn('"abc"', '"abc"')).toBe('json_equal');
    expect(matchReturn('abc', 'abc')).toBe('exact');
  });
});

import { describe, expect, it } from 'vitest';
import { matchOutput } from '../../src/code/compare-output.js';
import { matchReturn } from '../../src/code/compare-return.js';

describe('stdout comparison, line by line', () => {
  it('accepts output equal after stripping', () => {
    expect(matchOutput('42\n', '42')).toBe('exact');
    expect(matchOutput('  a b\nc  \n\n', 'a b\nc')).toBe('exact');
    expect(matchOutput('1\r\n2\r\n', '1\n2')).toBe('exact');
  });

  it('accepts the same lines, each stripped; a blank line inside the output counts', () => {
    expect(matchOutput('1 2  \n  3\n', '1 2\n3')).toBe('lines');
    expect(matchOutput('\n\n1\n2\n\n', '1\n2')).toBe('exact');
    expect(matchOutput('1\n\n2\n', '1\n2')).toBeNull();
  });

  it('keeps the spacing inside a line exact', () => {
    expect(matchOutput('1  2', '1 2')).toBeNull();
    expect(matchOutput('1\t2', '1 2')).toBeNull();
    expect(matchOutput('a  b\n1.0 2', 'a  b\n1 2')).toBe('numbers');
    expect(matchOutput('1.0  2', '1 2')).toBeNull();
  });

  it('compares digit strings as text: leading zeros and signs matter', () => {
    expect(matchOutput('101', '00000101')).toBeNull();
    expect(matchOutput('00000101', '101')).toBeNull();
    expect(matchOutput('-007', '-7')).toBeNull();
    expect(matchOutput('-0', '0')).toBeNull();
    expect(matchOutput('+5', '5')).toBeNull();
    expect(matchOutput('101.0', '00000101')).toBeNull();
  });

  it('reads decimals exactly, never through a double', () => {
    expect(matchOutput('1000000000000000000.5', '1000000000000000000')).toBeNull();
    expect(matchOutput('18000000003000000000.0', '18000000003000000000')).toBe('numbers');
    expect(matchOutput('18000000003000000000', '18000000003000000000.0')).toBe('numbers');
    expect(matchOutput('1.8000000003e19', '18000000003000000000')).toBe('numbers');
    expect(matchOutput('1.8000000003e19 -0.0', '18000000003000000000 0')).toBe('numbers');
    expect(matchOutput('18000000003000000001.0', '18000000003000000000')).toBeNull();
    expect(matchOutput('9007199254740993.0', '9007199254740992')).toBeNull();
    // On the tolerance's edge, the exact values decide: 1e-8 + 1e-5 * 1 = 0.00001001 exactly.
    expect(matchOutput('1.00001001', '1.0')).toBe('numbers');
    expect(matchOutput('1.0000100100000000001', '1.0')).toBeNull();
    expect(matchOutput('0.99998999', '1.0')).toBe('numbers');
    expect(matchOutput('0.9999899899999999999', '1.0')).toBeNull();
  });

  it('compares integers as integers, exactly, at any size', () => {
    expect(matchOutput('3.0', '3')).toBe('numbers');
    expect(matchOutput('123456789012345678901', '123456789012345678900')).toBeNull();
    expect(matchOutput('2000000001', '2000000000')).toBeNull();
    expect(matchOutput('3.5', '3')).toBeNull();
    expect(matchOutput('-7.000', '-7')).toBe('numbers');
    expect(matchOutput('7', '-7')).toBeNull();
  });

  it('compares a 16 MB integer in linear time', () => {
    const huge = '9'.repeat(16 * 1024 * 1024);
    const started = performance.now();
    expect(matchOutput(huge, `${huge.slice(1)}8`)).toBeNull();
    expect(matchReturn(huge, '1')).toBeNull();
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('accepts floats within numpy allclose tolerance, and only then', () => {
    expect(matchOutput('0.3333333', '0.33333333333')).toBe('numbers');
    expect(matchOutput('1e-9', '0.0')).toBe('numbers');
    expect(matchOutput('100000.5', '100000.0')).toBe('numbers');
    expect(matchOutput('100002', '100000.0')).toBeNull();
    expect(matchOutput('0.34', '0.3333')).toBeNull();
  });

  it('gives a non-finite value only its own literal', () => {
    expect(matchOutput('inf', 'inf')).toBe('exact');
    expect(matchOutput('inf', '1e309')).toBeNull();
    expect(matchOutput('1e309', '1e309')).toBe('exact');
    expect(matchOutput('1e400', '1e309')).toBeNull();
    expect(matchOutput('nan 1.0', 'nan 1')).toBe('numbers');
    expect(matchOutput('nan', 'NaN')).toBeNull();
  });

  it('rejects reordered, de-duplicated, repeated or re-wrapped output', () => {
    expect(matchOutput('3 1 2\nb a', '1 2 3\na b')).toBeNull();
    expect(matchOutput('1 2', '1 2 2')).toBeNull();
    expect(matchOutput('1 2 2 2', '1 2 2')).toBeNull();
    expect(matchOutput('1 2 3', '1\n2\n3')).toBeNull();
    expect(matchOutput('a b\nc', 'a b c')).toBeNull();
  });

  it('rejects a wrong answer', () => {
    expect(matchOutput('YES', 'NO')).toBeNull();
    expect(matchOutput('', '0')).toBeNull();
  });
});

describe('LeetCode return comparison: exact JSON equality', () => {
  it('compares JSON values as Python compares the decoded values', () => {
    expect(matchReturn('[0, 1]', '[0,1]')).toBe('json_equal');
    expect(matchReturn('{"a": [1, 2]}', '{"a":[1,2]}')).toBe('json_equal');
    expect(matchReturn('2.0', '2')).toBe('json_equal');
    expect(matchReturn('"abc"', '"abc"')).toBe('json_equal');
    expect(matchReturn('Infinity', 'Infinity')).toBe('json_equal');
  });

  it('has no float tolerance, no rounding of large integers and no order-blindness', () => {
    expect(matchReturn('2.00000001', '2')).toBeNull();
    expect(matchReturn('0.30000000000000004', '0.3')).toBeNull();
    expect(matchReturn('12345678901234567891', '12345678901234567890')).toBeNull();
    expect(matchReturn('[1, 3, 2, 4]', '[1, 2, 3, 4]')).toBeNull();
    expect(matchReturn('[1, 0]', '[0, 1]')).toBeNull();
    expect(matchReturn('true', '1')).toBeNull();
    expect(matchReturn('true', 'false')).toBeNull();
  });

  it('never accepts infinity or NaN for a number', () => {
    expect(matchReturn('Infinity', '1e308')).toBeNull();
    expect(matchReturn('NaN', 'NaN')).toBeNull();
  });

  it('matches nothing when either side is not JSON: no text fallback', () => {
    expect(matchReturn('abc', 'abc')).toBeNull();
    expect(matchReturn('[1, 2', '[1, 2')).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { decodeFloat32, decodeInt32, encodeFloat32, encodeInt32 } from '../../src/tokens/token-codec.js';

describe('int32 token codec', () => {
  it('round-trips ids, including negatives, zero and the int32 extremes', () => {
    const values = [0, 1, -1, 151_645, 151_935, 2_147_483_647, -2_147_483_648, -42];
    expect(decodeInt32(encodeInt32(values))).toEqual(values);
  });

  it('stores four little-endian bytes per value', () => {
    const buffer = encodeInt32([1, 256, -1]);
    expect(buffer).toHaveLength(12);
    expect([...buffer]).toEqual([1, 0, 0, 0, 0, 1, 0, 0, 255, 255, 255, 255]);
  });

  it('round-trips an empty list', () => {
    expect(encodeInt32([])).toHaveLength(0);
    expect(decodeInt32(encodeInt32([]))).toEqual([]);
  });

  it('decodes a buffer that is a view into a larger one', () => {
    const whole = encodeInt32([7, 8, 9, 10]);
    expect(decodeInt32(whole.subarray(4, 12))).toEqual([8, 9]);
  });

  it('refuses a value outside int32 instead of wrapping it', () => {
    expect(() => encodeInt32([2 ** 31])).toThrow(RangeError);
  });

  it('round-trips 100K ids', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 151_936);
    expect(decodeInt32(encodeInt32(values))).toEqual(values);
  });
});

describe('float32 logprob codec', () => {
  it('round-trips logprobs within 1e-6 relative error', () => {
    const values = [0, -0.1, -0.123456789, -1e-7, -2.5, -17.3333, -1e4, 3.14159];
    const decoded = decodeFloat32(encodeFloat32(values));
    expect(decoded).toHaveLength(values.length);
    decoded.forEach((value, i) => {
      const expected = values[i]!;
      expect(Math.abs(value - expected)).toBeLessThanOrEqual(1e-6 * Math.abs(expected));
    });
  });

  it('keeps zeros exactly zero', () => {
    expect(decodeFloat32(encodeFloat32([0, 0, -0.5]))).toEqual([0, 0, -0.5]);
  });

  it('stores four bytes per value', () => {
    expect(encodeFloat32([-0.1, -0.2, -0.3])).toHaveLength(12);
  });
});

import { describe, expect, it } from 'vitest';
import { matchOutput } from '../../src/code/compare-output.js';
import { matchReturn } from '../../src/code/compare-return.js';

// The comparison runs on the worker's event loop: it must be linear in what the solution printed, whatever that
// is. Each case is timed alone against a generous bound (a quadratic scan of a million digits takes hours).
const MILLION = 1_000_000;
const digits = (n: number, seed: number): string => {
  let text = '';
  for (let i = 0; text.length < n; i++) text += String((seed * 7919 + i * 104_729) % 1_000_000_007);
  return text.slice(0, n);
};
const timed = (run: () => unknown): number => {
  const started = performance.now();
  run();
  return performance.now() - started;
};

const SHAPES: Array<[name: string, actual: string, expected: string]> = [
  ['a million digits ending in a letter', `${'1'.repeat(MILLION)}x`, '1'],
  ['a million digits against a float', `${digits(MILLION, 1)}.5`, '0.5'],
  ['a million-digit float ending in a letter', `0.${'1'.repeat(MILLION)}x`, '0.1'],
  ['a million digits then a point and an exponent', `${'9'.repeat(MILLION)}.e`, '9.0'],
  ['a million-digit exponent', `1e${'1'.repeat(MILLION)}`, '1.0'],
  ['a million-digit integer against its float spelling', `${digits(MILLION, 2)}.0`, digits(MILLION, 2)],
  ['a million signs', '+-'.repeat(MILLION / 2), '1'],
  ['a million points', '.'.repeat(MILLION), '1.0'],
  [
    'one line of 200,000 numbers',
    Array.from({ length: 200_000 }, (_, i) => `${i}.0000001`).join(' '),
    Array.from({ length: 200_000 }, (_, i) => `${i}.0`).join(' '),
  ],
  ['one line of a million blanks between two tokens', `1${' '.repeat(MILLION)}2`, '1 2'],
  [
    '100,000 lines of edge-of-tolerance floats',
    Array.from({ length: 100_000 }, () => '1.00001001').join('\n'),
    Array.from({ length: 100_000 }, () => '1.0').join('\n'),
  ],
];

describe('the output comparison stays linear whatever the solution printed', () => {
  it.each(SHAPES)('%s: compared in under a second', (_name, actual, expected) => {
    expect(timed(() => matchOutput(actual, expected))).toBeLessThan(1_000);
    expect(timed(() => matchOutput(expected, actual))).toBeLessThan(1_000);
  });

  it('a 16 MB token (the output limit), either way round: under 5 s (a quadratic scan would take days)', () => {
    const token = 'a'.repeat(16 * 1024 * 1024);
    expect(timed(() => matchOutput(token, token.slice(1)))).toBeLessThan(5_000);
    expect(timed(() => matchOutput(token.slice(1), token))).toBeLessThan(5_000);
  });

  it('seeded random streams of digits, points, signs, exponents and blanks: each under a second', () => {
    const alphabet = '0123456789.e-+ \nx';
    let state = 34;
    const next = (): number => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let round = 0; round < 20; round++) {
      let text = '';
      while (text.length < 200_000) {
        const char = alphabet[next() % alphabet.length]!;
        text += char.repeat(1 + (next() % 5_000));
      }
      expect(timed(() => matchOutput(text, text.replace(/x/g, '1')))).toBeLessThan(1_000);
    }
  });

  it('parses a return value of a million digits in under a second', () => {
    const big = digits(MILLION, 3).replace(/^0+/, '1');
    expect(timed(() => expect(matchReturn(big, big)).toBe('json_equal'))).toBeLessThan(1_000);
    expect(timed(() => expect(matchReturn(`[${big}]`, `[${big.slice(0, -1)}0]`)).toBeNull())).toBeLessThan(1_000);
  });

  it('parses a 16 MB string, escapes throughout, twice, in under 3 s', () => {
    const string = JSON.stringify('ab\\"'.repeat(4 * 1024 * 1024));
    expect(timed(() => expect(matchReturn(string, string)).toBe('json_equal'))).toBeLessThan(3_000);
  });
});

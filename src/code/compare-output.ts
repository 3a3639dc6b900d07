/** A comparison rule that accepted an output, strictest first. */
export type OutputRule = 'exact' | 'lines' | 'non_empty_lines' | 'close_floats' | 'token_sets';

const lines = (text: string): string[] => text.split('\n').map((line) => line.trim());
const nonEmpty = (rows: string[]): string[] => rows.filter((line) => line !== '');
const tokens = (text: string): string[] => text.split(/\s+/).filter((token) => token !== '');
const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Whether a program's stdout matches the expected output, and by which rule: equal after stripping; equal
 * as lists of stripped lines; equal ignoring empty lines; all tokens floats and close (numpy `allclose`
 * defaults); equal as token sets per line. Null when no rule accepts it.
 */
export function matchOutput(actual: string, expected: string): OutputRule | null {
  const a = actual.replace(/\r\n?/g, '\n');
  const e = expected.replace(/\r\n?/g, '\n');
  if (a.trim() === e.trim()) return 'exact';
  const aLines = lines(a.trim());
  const eLines = lines(e.trim());
  if (sameList(aLines, eLines)) return 'lines';
  const aRows = nonEmpty(aLines);
  const eRows = nonEmpty(eLines);
  if (sameList(aRows, eRows)) return 'non_empty_lines';
  if (closeFloats(tokens(a), tokens(e))) return 'close_floats';
  if (aRows.length === eRows.length && aRows.every((row, i) => sameSet(tokens(row), tokens(eRows[i] ?? '')))) return 'token_sets';
  return null;
}

/** numpy.allclose defaults: |a − e| ≤ atol + rtol·|e| with rtol 1e-5, atol 1e-8. */
export function closeNumbers(a: number, e: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(e)) return false;
  if (a === e) return true;
  return Math.abs(a - e) <= 1e-8 + 1e-5 * Math.abs(e);
}

const FLOAT = /^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf(inity)?|nan)$/i;

function closeFloats(a: readonly string[], e: readonly string[]): boolean {
  if (a.length !== e.length || a.length === 0) return false;
  if (!a.every((t) => FLOAT.test(t)) || !e.every((t) => FLOAT.test(t))) return false;
  return a.every((t, i) => closeNumbers(toNumber(t), toNumber(e[i] ?? '')));
}

// Python prints inf / nan; parseFloat reads only Infinity.
const toNumber = (token: string): number => parseFloat(token.replace(/^([+-]?)inf(inity)?$/i, '$1Infinity'));

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((token) => right.has(token));
}

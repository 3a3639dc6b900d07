/** A comparison rule that accepted an output, strictest first. */
export type OutputRule = 'exact' | 'lines' | 'numbers';

// Integers are compared as integers (any length, exactly); a float token as numpy's allclose. No inf, no nan:
// a non-finite value is equal only to the same literal, through the text rules.
const INTEGER = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const rows = (text: string): string[] => text.trim().split('\n').map((line) => line.trim()).filter((line) => line !== '');
const tokens = (line: string): string[] => line.split(/\s+/);

/**
 * Whether a program's stdout matches the expected output, and by which rule, each line on its own as AReaL
 * compares them: equal after stripping; the same non-empty lines, each stripped; or the same lines where
 * every differing line has the same tokens, numbers equal as numbers (`numbersEqual`). Null when no rule
 * accepts it: a different number of lines or tokens never matches, nor does reordered or de-duplicated output.
 */
export function matchOutput(actual: string, expected: string): OutputRule | null {
  const a = actual.replace(/\r\n?/g, '\n');
  const e = expected.replace(/\r\n?/g, '\n');
  if (a.trim() === e.trim()) return 'exact';
  const aRows = rows(a);
  const eRows = rows(e);
  if (aRows.length !== eRows.length) return null;
  if (aRows.every((row, i) => row === eRows[i])) return 'lines';
  return aRows.every((row, i) => sameTokens(tokens(row), tokens(eRows[i]!))) ? 'numbers' : null;
}

function sameTokens(a: readonly string[], e: readonly string[]): boolean {
  return a.length === e.length && a.every((token, i) => token === e[i] || numbersEqual(token, e[i]!));
}

/**
 * Two printed numbers as the same value. An expected integer needs exactly that integer (`3.0` for `3`
 * passes, a wrong low digit of a 20-digit number does not); an expected float accepts any finite number
 * within numpy `allclose` (|a − e| ≤ 1e-8 + 1e-5·|e|). A token that overflows to infinity is no number.
 */
export function numbersEqual(actual: string, expected: string): boolean {
  if (INTEGER.test(expected)) {
    if (INTEGER.test(actual)) return sameInteger(actual, expected);
    if (!FLOAT.test(actual)) return false;
    const value = Number(actual);
    return Number.isInteger(value) && sameInteger(BigInt(value).toString(), expected);
  }
  if (!FLOAT.test(expected) || !(INTEGER.test(actual) || FLOAT.test(actual))) return false;
  const a = Number(actual);
  const e = Number(expected);
  if (!Number.isFinite(a) || !Number.isFinite(e)) return false;
  return Math.abs(a - e) <= 1e-8 + 1e-5 * Math.abs(e);
}

/**
 * Two integer literals as the same integer, by their digits: no BigInt, whose parse of a 16 MB answer would
 * take the worker minutes.
 */
export function sameInteger(a: string, b: string): boolean {
  return canonicalInteger(a) === canonicalInteger(b);
}

function canonicalInteger(text: string): string {
  const digits = text.replace(/^[+-]/, '').replace(/^0+(?=\d)/, '');
  return digits === '0' || !text.startsWith('-') ? digits : `-${digits}`;
}

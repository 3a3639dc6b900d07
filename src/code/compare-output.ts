import { exactValue, integralValue, isCanonicalInteger, scanDecimal, type DecimalLiteral } from './decimal-literal.js';

/** A comparison rule that accepted an output, strictest first. */
export type OutputRule = 'exact' | 'lines' | 'numbers';

// numpy allclose's defaults: |a - e| <= ATOL + RTOL * |e|, as 1e-8 and 1e-5 exactly (powers of ten).
const ATOL_POWER = -8;
const RTOL_POWER = -5;
const ATOL = 1e-8;
const RTOL = 1e-5;
/** Where a double's verdict on the tolerance is too close to call and the exact one decides (far above its rounding). */
const UNSURE = 1e-9;

const isBlank = (code: number): boolean => code === 32 || code === 9 || code === 11 || code === 12;

/**
 * The output's lines, as AReaL's `get_stripped_lines`: the whole output stripped, split at newlines, each line
 * stripped; blank lines inside the output count.
 */
const stripLines = (text: string): string[] =>
  text
    .trim()
    .split('\n')
    .map((line) => line.trim());

/**
 * Whether a program's stdout matches the expected output, and by which rule (docs/code-sandbox.md, "Comparison
 * rules"): equal after stripping (`exact`); the same lines, each stripped (`lines`); or the same lines where
 * every differing line has the same tokens and the same spacing between them, each token equal as text or by
 * `numbersEqual` (`numbers`). Null when no rule accepts it. Every step is a linear scan: whatever the solution
 * printed (at most the output limit), no comparison backtracks or parses a number past `MAX_NUMBER_CHARS`.
 */
export function matchOutput(actual: string, expected: string): OutputRule | null {
  const a = actual.replace(/\r\n?/g, '\n');
  const e = expected.replace(/\r\n?/g, '\n');
  if (a.trim() === e.trim()) return 'exact';
  const aLines = stripLines(a);
  const eLines = stripLines(e);
  if (aLines.length !== eLines.length) return null;
  if (aLines.every((line, i) => line === eLines[i])) return 'lines';
  return aLines.every((line, i) => sameLine(line, eLines[i]!)) ? 'numbers' : null;
}

/** Two stripped lines: token by token, with the same blanks between tokens (spacing inside a line is exact). */
function sameLine(actual: string, expected: string): boolean {
  if (actual === expected) return true;
  let i = 0;
  let j = 0;
  while (i < actual.length || j < expected.length) {
    const tokenEnd = (line: string, from: number): number => {
      let at = from;
      while (at < line.length && !isBlank(line.charCodeAt(at))) at++;
      return at;
    };
    const aEnd = tokenEnd(actual, i);
    const eEnd = tokenEnd(expected, j);
    const aToken = actual.slice(i, aEnd);
    const eToken = expected.slice(j, eEnd);
    if (aToken !== eToken && !numbersEqual(aToken, eToken)) return false;
    i = aEnd;
    j = eEnd;
    while (i < actual.length && j < expected.length && isBlank(actual.charCodeAt(i)) && actual[i] === expected[j]) {
      i++;
      j++;
    }
    const aBlank = i < actual.length && isBlank(actual.charCodeAt(i));
    const eBlank = j < expected.length && isBlank(expected.charCodeAt(j));
    if (aBlank || eBlank) return false;
  }
  return true;
}

/**
 * Two printed numbers as the same value, read exactly (never through a double alone):
 * - an expected integer literal (`-12`, `00101`) is a digit string: an integer literal must be the same text;
 *   a float literal passes only when the expected integer is written as Python prints an int and the float's
 *   exact value is that integer (`3.0` for `3`; `1000000000000000000.5` is not `1000000000000000000`);
 * - an expected float literal (a point or an exponent) accepts any number within numpy `allclose` of it,
 *   |a − e| ≤ 1e-8 + 1e-5·|e|, decided on the exact decimal values;
 * - nothing else is a number: `inf`, `nan`, hex, and a literal beyond a double's range equal only their own text.
 */
export function numbersEqual(actual: string, expected: string): boolean {
  if (actual === expected) return true;
  const e = scanDecimal(expected);
  const a = scanDecimal(actual);
  if (e === undefined || a === undefined) return false;
  if (!e.float) return a.float && isCanonicalInteger(expected) && integralValue(a, expected.length) === expected;
  return withinTolerance(a, Number(actual), e, Number(expected));
}

function withinTolerance(a: DecimalLiteral, aDouble: number, e: DecimalLiteral, eDouble: number): boolean {
  if (!Number.isFinite(aDouble) || !Number.isFinite(eDouble)) return false;
  const difference = Math.abs(aDouble - eDouble);
  const tolerance = ATOL + RTOL * Math.abs(eDouble);
  // Both doubles are within 1e-16 of the values: far from the edge, their verdict is the exact one.
  if (difference <= tolerance * (1 - UNSURE)) return true;
  if (difference >= tolerance * (1 + UNSURE)) return false;
  // On the edge: exactly, in integers scaled by 10^-low, where low is the smallest power in play.
  const av = exactValue(a);
  const ev = exactValue(e);
  const low = Math.min(av.exponent, ev.exponent + RTOL_POWER, ATOL_POWER);
  const scale = (mantissa: bigint, exponent: number): bigint => mantissa * 10n ** BigInt(exponent - low);
  const gap = scale(av.mantissa, av.exponent) - scale(ev.mantissa, ev.exponent);
  const magnitude = ev.mantissa < 0n ? -ev.mantissa : ev.mantissa;
  return (gap < 0n ? -gap : gap) <= scale(1n, ATOL_POWER) + scale(magnitude, ev.exponent + RTOL_POWER);
}

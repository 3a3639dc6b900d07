/**
 * A decimal number as a solution prints it, read by a hand-written scanner (linear, no regular expression over
 * the token): `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`. Its value is kept as text, never
 * as a double: `digits` are all its digits, integer part and fraction together, and the value is
 * ±0.digits × 10^point.
 */
export interface DecimalLiteral {
  negative: boolean;
  /** Written with a point or an exponent: a float literal, compared by value; otherwise an integer literal. */
  float: boolean;
  digits: string;
  /** Where the decimal point falls in `digits` (may be negative, or past their end). */
  point: number;
}

/** Tokens longer than this, and exponents past ±`MAX_EXPONENT`, are no number: they are compared as text. */
export const MAX_NUMBER_CHARS = 1_000;
export const MAX_EXPONENT = 9_999;

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** The literal `token` spells, or undefined when it is no decimal literal (inf, nan, hex, `1_000`, empty). */
export function scanDecimal(token: string): DecimalLiteral | undefined {
  if (token.length === 0 || token.length > MAX_NUMBER_CHARS) return undefined;
  let at = 0;
  const sign = token[0];
  if (sign === '+' || sign === '-') at++;
  const intStart = at;
  while (at < token.length && isDigit(token.charCodeAt(at))) at++;
  const intDigits = token.slice(intStart, at);
  let fraction = '';
  let float = false;
  if (token[at] === '.') {
    float = true;
    const fracStart = ++at;
    while (at < token.length && isDigit(token.charCodeAt(at))) at++;
    fraction = token.slice(fracStart, at);
  }
  if (intDigits === '' && fraction === '') return undefined;
  let exponent = 0;
  if (token[at] === 'e' || token[at] === 'E') {
    float = true;
    at++;
    const negativeExponent = token[at] === '-';
    if (token[at] === '-' || token[at] === '+') at++;
    const expStart = at;
    while (at < token.length && isDigit(token.charCodeAt(at))) at++;
    if (at === expStart || at - expStart > 4) return undefined;
    exponent = Number(token.slice(expStart, at)) * (negativeExponent ? -1 : 1);
  }
  if (at !== token.length) return undefined;
  return { negative: sign === '-', float, digits: intDigits + fraction, point: intDigits.length + exponent };
}

/**
 * The integer a literal's value is, as canonical digits (`-12`, `0`), or undefined when its value has a
 * fraction, or more than `maxDigits` digits (then it equals no integer of that length). Linear in the literal.
 */
export function integralValue(literal: DecimalLiteral, maxDigits: number): string | undefined {
  let start = 0;
  while (start < literal.digits.length && literal.digits[start] === '0') start++;
  let end = literal.digits.length;
  while (end > start && literal.digits[end - 1] === '0') end--;
  if (start === end) return '0';
  const point = literal.point - start;
  const significant = literal.digits.slice(start, end);
  if (point < significant.length) return undefined;
  if (point > maxDigits) return undefined;
  return `${literal.negative ? '-' : ''}${significant}${'0'.repeat(point - significant.length)}`;
}

/** Whether an integer literal is written as Python prints an int: no sign but a minus, no leading zero, no `-0`. */
export function isCanonicalInteger(token: string): boolean {
  const digits = token.startsWith('-') ? token.slice(1) : token;
  if (digits === '' || (digits.length > 1 && digits[0] === '0') || token === '-0') return false;
  for (let i = 0; i < digits.length; i++) if (!isDigit(digits.charCodeAt(i))) return false;
  return true;
}

/** The literal's exact value as an integer mantissa and a power of ten: value = mantissa × 10^exponent. */
export function exactValue(literal: DecimalLiteral): { mantissa: bigint; exponent: number } {
  const mantissa = BigInt(literal.digits === '' ? '0' : literal.digits);
  return { mantissa: literal.negative ? -mantissa : mantissa, exponent: literal.point - literal.digits.length };
}

import { type ExactJson, parseExactJson } from './exact-json.js';

/** The rule that accepted a LeetCode-style return value: there is one. */
export type ReturnRule = 'json_equal';

/**
 * Whether a function's return value (the JSON the launcher wrote, tuples as lists) equals the expected
 * output, as Python's `==` compares the two decoded values: integers exactly at any size, an integer equal
 * to a float only when the float is that integer, NaN equal to nothing, booleans never numbers. No float
 * tolerance and no text fallback: an expected output that is not JSON matches nothing.
 */
export function matchReturn(actualJson: string, expected: string): ReturnRule | null {
  const want = parseExactJson(expected);
  const got = parseExactJson(actualJson);
  return want !== undefined && got !== undefined && sameValue(got, want) ? 'json_equal' : null;
}

function sameValue(a: ExactJson, e: ExactJson): boolean {
  if (Array.isArray(a) || Array.isArray(e))
    return Array.isArray(a) && Array.isArray(e) && a.length === e.length && a.every((x, i) => sameValue(x, e[i]!));
  if (isNumber(a) || isNumber(e)) return isNumber(a) && isNumber(e) && sameNumber(a.number, e.number);
  if (isObject(a) || isObject(e)) {
    if (!isObject(a) || !isObject(e) || a.object.size !== e.object.size) return false;
    return [...e.object].every(([key, value]) => a.object.has(key) && sameValue(a.object.get(key)!, value));
  }
  return a === e;
}

const isNumber = (value: ExactJson): value is { number: string } => typeof value === 'object' && value !== null && 'number' in value;
const isObject = (value: ExactJson): value is { object: Map<string, ExactJson> } => typeof value === 'object' && value !== null && 'object' in value;
const INTEGER = /^-?\d+$/;

// JSON integers have no leading zeros or plus sign: the same integer is the same text, but for -0.
const sameInteger = (a: string, b: string): boolean => a === b || (/^-?0$/.test(a) && /^-?0$/.test(b));
const canonical = (integer: string): string => (integer === '-0' ? '0' : integer);

function sameNumber(a: string, e: string): boolean {
  if (INTEGER.test(a) && INTEGER.test(e)) return sameInteger(a, e);
  const [integer, float] = INTEGER.test(a) ? [a, e] : INTEGER.test(e) ? [e, a] : [undefined, undefined];
  if (integer !== undefined) {
    const value = toFloat(float!);
    return Number.isInteger(value) && BigInt(value).toString() === canonical(integer!);
  }
  return toFloat(a) === toFloat(e);
}

const toFloat = (text: string): number =>
  text === 'NaN' ? Number.NaN : text.endsWith('Infinity') ? (text.startsWith('-') ? -Infinity : Infinity) : Number(text);

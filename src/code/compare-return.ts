import { closeNumbers, matchOutput, type OutputRule } from './compare-output.js';

/** A rule that accepted a LeetCode-style return value. */
export type ReturnRule = 'json_equal' | OutputRule;

/**
 * Whether a function's return value (as the sandbox printed it, JSON) matches the expected output: equal as
 * JSON values (numbers close as numpy's `allclose`, tuples printed as lists); when the expected output is not
 * JSON, the stdout rules on the text.
 */
export function matchReturn(actualJson: string, expected: string): ReturnRule | null {
  const want = parseJson(expected);
  if (want.ok) {
    const got = parseJson(actualJson);
    if (got.ok && sameValue(got.value, want.value)) return 'json_equal';
  }
  return matchOutput(actualJson, expected);
}

function sameValue(a: unknown, e: unknown): boolean {
  if (typeof a === 'number' && typeof e === 'number') return closeNumbers(a, e);
  if (Array.isArray(a) && Array.isArray(e)) return a.length === e.length && a.every((x, i) => sameValue(x, e[i]));
  if (isRecord(a) && isRecord(e)) {
    const keys = Object.keys(e);
    return keys.length === Object.keys(a).length && keys.every((key) => key in a && sameValue(a[key], e[key]));
  }
  return a === e;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

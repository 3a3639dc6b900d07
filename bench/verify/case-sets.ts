import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnswerExtraction, VerdictStatus } from '../../src/verifier/types.js';

/** One labelled check: the verdict a correct verifier gives. */
export interface LabelledCase {
  set: string;
  category: string;
  gold: string | string[];
  pred: string;
  expected: Extract<VerdictStatus, 'correct' | 'wrong' | 'no_answer'>;
  /**
   * Only match / no match is labelled (Math-Verify's `verify` is boolean): any verdict other
   * than `correct` agrees with an expected `wrong`.
   */
  binary?: boolean;
  /** The extraction the check runs with; default `stated`. */
  extraction?: AnswerExtraction;
}

/** The project's own labelled cases, shared with the tests. */
export const LABELLED_CASES_URL = new URL('../../test/verifier/labelled-cases.jsonl', import.meta.url);

function readJsonLines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export function loadLabelledCases(): LabelledCase[] {
  return readJsonLines(fileURLToPath(LABELLED_CASES_URL)).map((row) => ({
    set: 'labelled',
    category: String(row.category),
    gold: row.gold as string | string[],
    pred: String(row.pred),
    expected: row.expected as LabelledCase['expected'],
  }));
}

/**
 * Issue 16's cases (bare answers, prose endings, several boxes, precision, shapes, equivalences):
 * `tuned` were written while changing the verifier, `advance` before any change. Each is scored
 * twice: with the default extraction against `expected`, and with `math-verify` extraction
 * against `mv` (when given, else `expected`; only match / no match counts there).
 */
export function loadIssue16Cases(which: 'tuned' | 'advance'): LabelledCase[] {
  const url = new URL(`../../test/verifier/issue16-${which}.jsonl`, import.meta.url);
  return readJsonLines(fileURLToPath(url)).flatMap((row) => {
    const base = { category: String(row.category), gold: row.gold as string | string[], pred: String(row.pred) };
    const expected = row.expected as LabelledCase['expected'];
    return [
      { ...base, set: `i16-${which}`, expected, binary: expected === 'wrong' },
      {
        ...base,
        set: `i16-${which}-mv`,
        expected: (row.mv ?? expected) as LabelledCase['expected'],
        binary: true,
        extraction: 'math-verify' as const,
      },
    ];
  });
}

/** Math-Verify's own test cases, converted (see test/verifier/math-verify-cases.README.md). */
export const MATH_VERIFY_CASES_URL = new URL('../../test/verifier/math-verify-cases.jsonl', import.meta.url);

/** One converted Math-Verify test case, as stored. */
export interface MathVerifyRow {
  gold: string;
  pred: string;
  expected: boolean;
  source: string;
  original_pred?: string;
  /** Why Ratchet's documented policy (POLICIES.md) deliberately gives the other verdict. */
  policy_differs?: string;
}

export function loadMathVerifyRows(): MathVerifyRow[] {
  return readJsonLines(fileURLToPath(MATH_VERIFY_CASES_URL)) as unknown as MathVerifyRow[];
}

/**
 * Math-Verify's cases as benchmark rows. `math-verify` holds the cases where Ratchet's policy
 * agrees with Math-Verify and is labelled with Math-Verify's verdict; `math-verify-policy` holds
 * the few where POLICIES.md deliberately differs, labelled with Ratchet's policy verdict (the
 * opposite of Math-Verify's), so that they are counted apart and still guarded.
 */
export function loadMathVerifyCases(): LabelledCase[] {
  return loadMathVerifyRows().map((row) => {
    const differs = typeof row.policy_differs === 'string';
    const correct = differs ? !row.expected : row.expected;
    return {
      set: differs ? 'math-verify-policy' : 'math-verify',
      category: row.source,
      gold: row.gold,
      pred: row.pred,
      expected: correct ? ('correct' as const) : ('wrong' as const),
      binary: true,
    };
  });
}

/**
 * MATH-500: every gold answer against its own reference solution (must be equal), and against
 * the next problem's solution (must differ unless the two gold answers are the same string).
 */
export function loadMath500(dataDir: string): LabelledCase[] {
  const path = join(dataDir, 'math500.jsonl');
  if (!existsSync(path)) return [];
  const rows = readJsonLines(path);
  return rows.flatMap((row, k) => {
    const next = rows[(k + 1) % rows.length]!;
    const category = String(row.subject ?? 'math');
    const nearMiss = perturbLastDigit(String(row.answer));
    return [
      ...(nearMiss === null
        ? []
        : [{ set: 'math500-near-miss', category, gold: String(row.answer), pred: `\\boxed{${nearMiss}}`, expected: 'wrong' as const }]),
      { set: 'math500-own', category, gold: String(row.answer), pred: String(row.solution), expected: 'correct' as const },
      {
        set: 'math500-other',
        category,
        gold: String(row.answer),
        pred: String(next.solution),
        expected: sameWriting(String(row.answer), String(next.answer)) ? ('correct' as const) : ('wrong' as const),
      },
    ];
  });
}

/** The answer with its last digit changed (9 → 8, else +1): a near miss that must be wrong. */
function perturbLastDigit(written: string): string | null {
  // A unit's exponent (`\mbox{ cm}^2`) is not part of the value: drop the unit first.
  const answer = written.replace(/\\(?:mbox|text)\{[^}]*\}(?:\^\{?\d\}?)?/g, '');
  const m = /\d(?=\D*$)/.exec(answer);
  if (!m) return null;
  const digit = Number(m[0]);
  return `${answer.slice(0, m.index)}${digit === 9 ? 8 : digit + 1}${answer.slice(m.index + 1)}`;
}

// Deliberately cruder than the verifier: two gold answers written alike (`5` and `x = 5`).
function sameWriting(a: string, b: string): boolean {
  const plain = (s: string): string =>
    s
      .replace(/\\text\{([^}]*)\}|\$/g, '$1')
      .replace(/^\s*[a-z]\s*=/, '')
      .replace(/\s+/g, '');
  return plain(a) === plain(b);
}

/** GSM8K: the `#### n` gold against its worked answer, and against the next row's. */
export function loadGsm8k(dataDir: string, file: string): LabelledCase[] {
  const path = join(dataDir, file);
  if (!existsSync(path)) return [];
  const rows = readJsonLines(path);
  const gold = (row: Record<string, unknown>): string => String(row.answer).split('####').pop()!.trim();
  return rows.flatMap((row, k) => {
    const next = rows[(k + 1) % rows.length]!;
    return [
      { set: `${file.replace('.jsonl', '')}-own`, category: 'gsm8k', gold: gold(row), pred: String(row.answer), expected: 'correct' as const },
      {
        set: `${file.replace('.jsonl', '')}-other`,
        category: 'gsm8k',
        gold: gold(row),
        pred: String(next.answer),
        expected: gold(row).replace(/,/g, '') === gold(next).replace(/,/g, '') ? ('correct' as const) : ('wrong' as const),
      },
    ];
  });
}

/** Inputs a model could write to hang or crash a verifier; each must come back within budget. */
export function adversarialCases(): Array<{ name: string; gold: string | string[]; pred: string }> {
  return [
    { name: '10^9-term sum', gold: '1', pred: '\\boxed{\\sum_{k=1}^{10^9} k^2}' },
    { name: 'power tower vs power tower', gold: '2^{2^{2^{2^{2^{2}}}}}', pred: '\\boxed{3^{3^{3^{3^{3^{3}}}}}}' },
    { name: '100 KB of text', gold: '1', pred: `${'The value is large. '.repeat(5000)}\\boxed{2}` },
    { name: '100 KB inside a box', gold: '1', pred: `\\boxed{${'1+'.repeat(50_000)}1}` },
    { name: 'unbalanced braces', gold: '1', pred: `\\boxed{${'{'.repeat(100_000)}` },
    { name: 'repeated unbalanced boxes', gold: '1', pred: '\\boxed{'.repeat(15_000) },
    { name: 'deep nesting', gold: '1', pred: `\\boxed{${'('.repeat(1500)}1${')'.repeat(1500)}}` },
    { name: 'deep fractions', gold: '1', pred: `\\boxed{${'\\frac{1}{1+'.repeat(400)}1${'}'.repeat(400)}}` },
    { name: 'huge factorial', gold: '1', pred: '\\boxed{(10^{100})!}' },
    { name: 'huge binomial', gold: '1', pred: '\\boxed{\\binom{10^{12}}{10^{6}}}' },
    { name: '20,000 gold answers', gold: Array.from({ length: 20_000 }, (_, k) => `x^{${k + 2}} + ${k}`), pred: '\\boxed{x}' },
  ];
}

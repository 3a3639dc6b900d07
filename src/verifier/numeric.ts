import { type Complex, magnitude, sub } from './complex.js';

/**
 * Numeric agreement. The tolerances are a policy (POLICIES.md, "Decimal precision"):
 * - two exact values (integers, fractions, radicals, π …): relative 1e-9, i.e. float noise only;
 * - a gold written as a decimal with d places is taken as rounded: the prediction must round to
 *   it (|Δ| ≤ ½·10^-d) and lie within 1 % of it when exact (4/3 matches 1.33, 12/25 does not
 *   match 0.5), within 0.1 % when itself a decimal (7.7778 matches 7.78, 2.38 does not match 2.4);
 * - a decimal prediction against an exact non-integer gold: relative 1e-6 (about 7 significant
 *   digits, Math-Verify's 6-place rounding); against an integer gold it must be that integer.
 * AReaL's 1e-4 relative tolerance would make 1450100 equal 1450000; none of these does.
 */
export const EXACT_REL_TOL = 1e-9;
export const APPROX_REL_TOL = 1e-6;
export const ROUNDED_GOLD_REL_TOL = 1e-2;
export const ROUNDED_GOLD_DECIMAL_REL_TOL = 1e-3;

/** What the written form of a value says about its precision. */
export interface Precision {
  /** The LaTeX contains a decimal literal, so the value is approximate. */
  inexact: boolean;
  /** Places after the point when the whole answer is one decimal literal. */
  decimals: number | null;
}

export function precisionOf(latex: string): Precision {
  const plain = /^[-+]?\d*\.(\d+)$/.exec(latex.trim());
  return { inexact: /\d\.\d|(^|[^\d])\.\d/.test(latex), decimals: plain ? plain[1]!.length : null };
}

/** True when `pred` is an acceptable statement of `gold` under the policy above. */
export function numbersAgree(gold: Complex, goldPrecision: Precision, pred: Complex, predPrecision: Precision): boolean {
  const diff = magnitude(sub(gold, pred));
  const scale = Math.max(magnitude(gold), magnitude(pred));
  if (diff <= EXACT_REL_TOL * scale || diff === 0) return true;
  if (goldPrecision.decimals !== null && goldPrecision.decimals > 0) {
    const halfUnit = 0.5 * 10 ** -goldPrecision.decimals;
    const rel = predPrecision.inexact ? ROUNDED_GOLD_DECIMAL_REL_TOL : ROUNDED_GOLD_REL_TOL;
    return diff <= halfUnit * (1 + 1e-9) && diff <= rel * magnitude(gold);
  }
  if (!goldPrecision.inexact && !predPrecision.inexact) return false;
  const goldIsInteger = gold.im === 0 && Number.isInteger(gold.re) && !goldPrecision.inexact;
  if (goldIsInteger) return false;
  return diff <= APPROX_REL_TOL * scale;
}

/** A value written as a plain number: `-12`, `3.50`, `.5`, `7/8`, `\frac{7}{8}`, `-\frac{1}{2}`. */
export function parseNumberLiteral(latex: string): { value: number; digits: string | null } | null {
  const s = latex.replace(/\s+/g, '');
  const int = /^([-+]?)(\d+)$/.exec(s);
  if (int) {
    const digits = int[2]!.replace(/^0+(?=\d)/, '');
    return { value: Number(s), digits: `${int[1] === '-' && digits !== '0' ? '-' : ''}${digits}` };
  }
  if (/^[-+]?(?:\d+\.\d*|\.\d+)$/.test(s)) return { value: Number(s), digits: null };
  const frac = /^([-+]?)(?:\\frac\{(\d+)\}\{(\d+)\}|(\d+)\/(\d+))$/.exec(s);
  if (frac) {
    const num = Number(frac[2] ?? frac[4]);
    const den = Number(frac[3] ?? frac[5]);
    if (den === 0) return null;
    return { value: (frac[1] === '-' ? -1 : 1) * (num / den), digits: null };
  }
  return null;
}

import { type Complex, magnitude, sub } from './complex.js';

/**
 * Numeric agreement. The tolerances are a policy (POLICIES.md, "Decimal precision"):
 * - two exact values (integers, fractions, radicals, π …): relative 1e-9, i.e. float noise only;
 * - two decimals: the same value (trailing zeros aside); a decimal carrying more places than the
 *   gold states a different value (`16386.169` is not `16386.17`);
 * - a gold written as a decimal with d places is taken as rounded: an exact prediction must round
 *   to it (|Δ| ≤ ½·10^-d) and lie within 1 % of it (4/3 matches 1.33, 12/25 does not match 0.5);
 * - a decimal against an exact non-integer value: both rounded to 6 decimal places must agree
 *   (Math-Verify's rounding), and to a relative 1e-4 so tiny values are not all equal: `1.7320508`
 *   is √3, `1.73205` and `3.14159` (for π) are not; against an integer gold it must be that integer.
 * AReaL's 1e-4 relative tolerance would make 1450100 equal 1450000; none of these does.
 */
export const EXACT_REL_TOL = 1e-9;
export const DECIMAL_PLACES = 6;
export const APPROX_REL_TOL = 1e-4;
export const ROUNDED_GOLD_REL_TOL = 1e-2;

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
  if (goldPrecision.inexact && predPrecision.inexact) return false;
  if (goldPrecision.decimals !== null && goldPrecision.decimals > 0) {
    const halfUnit = 0.5 * 10 ** -goldPrecision.decimals;
    return diff <= halfUnit * (1 + 1e-9) && diff <= ROUNDED_GOLD_REL_TOL * magnitude(gold);
  }
  if (!goldPrecision.inexact && !predPrecision.inexact) return false;
  const goldIsInteger = gold.im === 0 && Number.isInteger(gold.re) && !goldPrecision.inexact;
  if (goldIsInteger) return false;
  return sameToPlaces(gold, pred, DECIMAL_PLACES) && diff <= APPROX_REL_TOL * scale;
}

function sameToPlaces(a: Complex, b: Complex, places: number): boolean {
  const unit = 10 ** places;
  const round = (x: number): number => Math.round(x * unit + (x >= 0 ? 1e-9 : -1e-9));
  return round(a.re) === round(b.re) && round(a.im) === round(b.im);
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

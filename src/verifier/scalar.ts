import { type Complex, complex, isFiniteComplex, mul } from './complex.js';
import { freeSymbols } from './evaluate.js';
import type { Match } from './match.js';
import { answerKey } from './normalise.js';
import { type Precision, numbersAgree, parseNumberLiteral, precisionOf } from './numeric.js';
import { agreeEverywhere, canonicallySame, parseLatex, tryEvaluate } from './symbolic.js';

/** One side of a comparison: a scalar's LaTeX and whether a % was written with the answer. */
export interface Side {
  latex: string;
  percent: boolean;
}

const NO_BINDINGS = new Map<string, Complex>();

/** Compares two scalar answers: exact string, plain numbers, then numeric / symbolic evaluation. */
export function compareScalars(gold: Side, pred: Side): Match {
  if (answerKey(gold.latex) === answerKey(pred.latex) && !percentOnlyPredicted(gold, pred)) return { equal: true, rule: 'string' };
  const g = parseNumberLiteral(gold.latex);
  const p = parseNumberLiteral(pred.latex);
  if (g?.digits != null && p?.digits != null) {
    // Integers compare digit by digit: doubles cannot tell 10^20 from 10^20 + 1.
    if (g.digits === p.digits) return { equal: true, rule: 'integer' };
    if (!gold.percent && !pred.percent) return { equal: false, rule: 'integer' };
  }
  if (g && p) return numericMatch(complex(g.value), complex(p.value), gold, pred);
  const gj = parseLatex(gold.latex);
  const pj = parseLatex(pred.latex);
  if (gj === null || pj === null) return { equal: false, rule: 'unparsed' };
  if (freeSymbols(gj).size === 0 && freeSymbols(pj).size === 0) {
    const a = tryEvaluate(gj, NO_BINDINGS);
    const b = tryEvaluate(pj, NO_BINDINGS);
    if ('ok' in a && 'ok' in b) return numericMatch(a.ok, b.ok, gold, pred);
    if ('overflow' in a || 'overflow' in b) return { equal: false, rule: 'overflow' };
    return { equal: canonicallySame(gj, pj), rule: 'canonical' };
  }
  const same = agreeEverywhere(gj, pj);
  if (same !== null) return { equal: same, rule: 'symbolic' };
  return { equal: canonicallySame(gj, pj), rule: 'canonical' };
}

/** A `%` written on the prediction only, against a gold that is not an integer: the value is ÷100. */
export function percentOnlyPredicted(gold: Side, pred: Side): boolean {
  return pred.percent && !gold.percent && !/^[-+]?\d+$/.test(gold.latex.trim());
}

/**
 * Numeric agreement with the percent policy: a `%` on the gold only lets the prediction give the
 * number or its decimal fraction (`28\%` matches `28` and `0.28`). A `%` on the prediction only
 * reads as ÷100 (Math-Verify: `4 4/9\%` is 40/900, not 40/9), except against an integer gold,
 * which may be a percentage stored without its sign (GSM8K): `28` accepts `28\%` and `2800\%`.
 */
function numericMatch(g: Complex, p: Complex, gold: Side, pred: Side): Match {
  if (!isFiniteComplex(g) || !isFiniteComplex(p)) {
    const same = Object.is(g.re, p.re) && Object.is(g.im, p.im);
    return { equal: same, rule: 'infinity' };
  }
  const gp = precisionOf(gold.latex);
  const pp = precisionOf(pred.latex);
  const golds: Array<[Complex, Precision]> = [[g, gp]];
  const preds: Array<[Complex, Precision]> = [];
  if (gold.percent && !pred.percent) golds.push([mul(g, complex(0.01)), shift(gp)]);
  const goldIsInteger = g.im === 0 && Number.isInteger(g.re) && !gp.inexact;
  if (!pred.percent || gold.percent || goldIsInteger) preds.push([p, pp]);
  if (pred.percent && !gold.percent) preds.push([mul(p, complex(0.01)), shift(pp)]);
  for (const [gv, gprec] of golds) {
    for (const [pv, pprec] of preds) {
      if (numbersAgree(gv, gprec, pv, pprec)) return { equal: true, rule: gv === g && pv === p ? 'numeric' : 'percent' };
    }
  }
  return { equal: false, rule: 'numeric' };
}

function shift(precision: Precision): Precision {
  return { inexact: precision.inexact, decimals: precision.decimals === null ? null : precision.decimals + 2 };
}

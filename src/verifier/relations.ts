import { magnitude } from './complex.js';
import { freeSymbols, type MathJson } from './evaluate.js';
import type { Match } from './match.js';
import type { RelOp, Shape } from './shape.js';
import { parseLatex, samplePoints, tryEvaluate } from './symbolic.js';

type Relation = Extract<Shape, { kind: 'relation' }>;

const SYMBOL_LIKE = [
  /^(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?(?:'|\^\{?\\prime\}?)?$/, // x, x_1, \theta, f'
  /^[a-zA-Z]\(\s*[a-zA-Z]\s*\)$/, // f(x)
  /^\(\s*[a-zA-Z](?:\s*,\s*[a-zA-Z])+\s*\)$/, // (p,q)
  /^[A-Z]{2,3}$|^\\overline\{[A-Z]{2}\}$|^(?:m\s*)?\\angle\s*[A-Z]{1,3}$/, // AB, \overline{AB}, \angle ABC
];

/** The name of a quantity rather than a value: what `x = 3` names before the `=`. */
export function isSymbolLike(term: string): boolean {
  const t = term.trim();
  return SYMBOL_LIKE.some((re) => re.test(t));
}

const QUANTITY_NAME = [
  /^(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?(?:\s*:\s*(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?)+$/, // A:B, V_1:V_2, S_{MBCN}:S
  /^\|\s*[A-Za-z]{1,3}\s*\|$/, // |AB|
  /^\\frac\{[A-Z]{1,3}\}\{[A-Z]{1,3}\}$/, // \frac{NO}{BO}
];

/** What may stand before `=` in a stated value: a quantity's name, a ratio of names, a length. */
function namesQuantity(term: string): boolean {
  const t = term.trim();
  return isSymbolLike(t) || QUANTITY_NAME.some((re) => re.test(t));
}

/**
 * The value a relation states, or null when it is a genuine equation or inequality.
 * `x = 3` → `3`; a chain `a = b = 7` → `7` (the last `=` term; a term after `\approx` is an
 * approximation and ignored, also after a bare value: `v \approx 0.577` → `v`); `x \in [0,1)` → `[0,1)`.
 */
export function relationValue(rel: Relation): string | null {
  const { terms, ops } = rel;
  if (ops.length === 1 && ops[0] === 'in' && isSymbolLike(terms[0]!)) return terms[1]!;
  if (!ops.every((op) => op === '=' || op === '~')) return null;
  // `\frac{\sqrt3}{3} \approx 0.577`: a value followed by its approximation states the value.
  if (ops.every((op) => op === '~') && !namesQuantity(terms[0]!)) return terms[0]!;
  const lastEq = ops.lastIndexOf('=');
  if (lastEq < 0) return ops.length === 1 && namesQuantity(terms[0]!) ? terms[1]! : null;
  if (lastEq === 0 && !namesQuantity(terms[0]!)) return null;
  return terms[lastEq + 1]!;
}

const INEQUALITY: ReadonlySet<RelOp> = new Set(['<', '<=', '>', '>=']);

/**
 * A one-variable inequality as an interval: `x > 5` → `(5, \infty)`, `-2 \le x \le 7` → `[-2, 7]`.
 * Null when the relation is not of that form.
 */
export function inequalityAsInterval(rel: Relation): Shape | null {
  const { terms, ops } = rel;
  if (!ops.every((op) => INEQUALITY.has(op))) return null;
  const interval = (lo: string, loOpen: boolean, hi: string, hiOpen: boolean): Shape => ({
    kind: 'seq',
    open: loOpen ? '(' : '[',
    close: hiOpen ? ')' : ']',
    items: [
      { kind: 'expr', latex: lo },
      { kind: 'expr', latex: hi },
    ],
  });
  const strict = (op: RelOp): boolean => op === '<' || op === '>';
  const up = (op: RelOp): boolean => op === '<' || op === '<=';
  if (terms.length === 2) {
    const [a, b] = terms as [string, string];
    const op = ops[0]!;
    if (isSymbolLike(a) && !isSymbolLike(b)) return up(op) ? interval('-\\infty', true, b, strict(op)) : interval(b, strict(op), '\\infty', true);
    if (isSymbolLike(b) && !isSymbolLike(a)) return up(op) ? interval(a, strict(op), '\\infty', true) : interval('-\\infty', true, a, strict(op));
    return null;
  }
  if (terms.length === 3 && isSymbolLike(terms[1]!) && up(ops[0]!) === up(ops[1]!)) {
    const [a, , b] = terms as [string, string, string];
    return up(ops[0]!) ? interval(a, strict(ops[0]!), b, strict(ops[1]!)) : interval(b, strict(ops[1]!), a, strict(ops[0]!));
  }
  return null;
}

interface Constraint {
  json: MathJson;
  op: 'eq' | 'lt' | 'le' | 'ne';
}

function constraints(rel: Relation): Constraint[] | null {
  const out: Constraint[] = [];
  for (let k = 0; k < rel.ops.length; k++) {
    const a = parseLatex(rel.terms[k]!);
    const b = parseLatex(rel.terms[k + 1]!);
    const op = rel.ops[k]!;
    if (!a || !b || op === 'in' || op === '~') return null;
    const flip = op === '>' || op === '>=';
    const json: MathJson = flip ? ['Subtract', b, a] : ['Subtract', a, b];
    out.push({ json, op: op === '=' ? 'eq' : op === '!=' ? 'ne' : op === '<' || op === '>' ? 'lt' : 'le' });
  }
  return out;
}

/**
 * Equations and inequalities are the same when their `lhs − rhs` differ by a constant factor:
 * any non-zero factor for `=` and `≠`, a positive one for `<` and `≤` (`x < 1` is `-x > -1`).
 */
export function compareRelations(gold: Relation, pred: Relation): Match {
  const g = constraints(gold);
  const p = constraints(pred);
  if (!g || !p || g.length !== p.length) return { equal: false, rule: 'relation-shape' };
  const used = new Set<number>();
  for (const c of g) {
    const k = p.findIndex((d, idx) => !used.has(idx) && d.op === c.op && proportional(c.json, d.json, c.op === 'lt' || c.op === 'le'));
    if (k < 0) return { equal: false, rule: 'relation' };
    used.add(k);
  }
  return { equal: true, rule: 'relation' };
}

function proportional(a: MathJson, b: MathJson, positive: boolean): boolean {
  const symbols = [...freeSymbols(a, freeSymbols(b))].sort();
  if (symbols.length === 0) return false;
  let ratio: number | null = null;
  let usable = 0;
  for (const env of samplePoints(symbols, 7)) {
    const x = tryEvaluate(a, env);
    const y = tryEvaluate(b, env);
    if (!('ok' in x) || !('ok' in y)) return false;
    if (x.leftReals || y.leftReals) continue;
    const [u, v] = [x.ok, y.ok];
    if (u.im !== 0 || v.im !== 0) return false;
    const small = 1e-12 * Math.max(1, magnitude(u), magnitude(v));
    if (Math.abs(u.re) <= small && Math.abs(v.re) <= small) continue;
    if (Math.abs(v.re) <= small || Math.abs(u.re) <= small) return false;
    const r = u.re / v.re;
    if (ratio === null) ratio = r;
    else if (Math.abs(r - ratio) > 1e-8 * Math.max(1, Math.abs(ratio))) return false;
    usable++;
  }
  return ratio !== null && usable >= 3 && (!positive || ratio > 0) && ratio !== 0;
}

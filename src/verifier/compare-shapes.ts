import type { Match } from './match.js';
import { answerKey } from './normalise.js';
import { compareRelations, inequalityAsInterval, relationValue } from './relations.js';
import { compareScalars } from './scalar.js';
import { type Shape, parseShape } from './shape.js';

/** Whether each side wrote a % sign (see the percent policy). */
export interface PercentFlags {
  gold: boolean;
  pred: boolean;
}

type Seq = Extract<Shape, { kind: 'seq' }>;
const MAX_ITEMS = 64;

/** Compares two shaped answers: relations, unions, matrices, tuples / sets / lists, scalars. */
export function compareShapes(gold: Shape, pred: Shape, percent: PercentFlags): Match {
  if (gold.kind === 'relation' && pred.kind === 'relation') {
    const asRelations = compareRelations(gold, pred);
    if (asRelations.equal) return asRelations;
  }
  const g = stated(gold);
  const p = stated(pred);
  if (g.kind === 'opaque' || p.kind === 'opaque') {
    const key = (s: Shape): string => (s.kind === 'opaque' || s.kind === 'expr' ? answerKey(s.latex) : JSON.stringify(s));
    return { equal: key(g) === key(p), rule: 'string-only' };
  }
  if (g.kind === 'relation' && p.kind === 'relation') return compareRelations(g, p);
  if (g.kind === 'relation') {
    // Policy: a gold inequality accepts the same set written as an interval …
    const interval = inequalityAsInterval(g);
    if (interval && p.kind !== 'expr') return tagged(compareShapes(interval, p, percent), 'inequality-gold');
    return { equal: false, rule: 'relation-vs-value' };
  }
  // … but a gold interval does not accept an inequality (Math-Verify's asymmetry).
  if (p.kind === 'relation') return { equal: false, rule: 'relation-vs-value' };
  if (g.kind === 'union' || p.kind === 'union') {
    const gp = g.kind === 'union' ? g.parts : [g];
    const pp = p.kind === 'union' ? p.parts : [p];
    return tagged(unordered(gp, pp, percent), 'union');
  }
  if (g.kind === 'matrix' || p.kind === 'matrix') return compareMatrices(g, p, percent);
  if (g.kind === 'seq' && p.kind === 'seq') return compareSeqs(g, p, percent);
  if (p.kind === 'seq' && p.open === '' && g.kind === 'expr') {
    // "15\frac{39}{40}, \frac{639}{40}": one value restated in two forms, not a hedge.
    const restated = p.items.every((item) => compareShapes(g, item, percent).equal);
    return { equal: restated, rule: restated ? 'restated' : 'value-vs-list' };
  }
  if (g.kind === 'expr' && p.kind === 'expr')
    return compareScalars({ latex: g.latex, percent: percent.gold }, { latex: p.latex, percent: percent.pred });
  return { equal: false, rule: 'shape' };
}

/** `x = 3` → `3`, `a = b = 7` → `7`, `x \in [0,1)` → `[0,1)`; anything else unchanged. */
function stated(shape: Shape): Shape {
  let s = shape;
  for (let k = 0; k < 4 && s.kind === 'relation'; k++) {
    const value = relationValue(s);
    if (value === null) break;
    s = parseShape(value);
  }
  return s;
}

/**
 * Order matters for tuples and intervals, not for sets or bare lists (MATH's "1, -2" lists
 * roots). A gold tuple accepts the same items without brackets; a gold set or bare list
 * accepts any list of the same items.
 */
function compareSeqs(g: Seq, p: Seq, percent: PercentFlags): Match {
  if (g.open === '' || g.open === '{') {
    if (p.open === '' || p.open === '{' || (g.open === '' && p.open === '(')) return tagged(unordered(g.items, p.items, percent), 'set');
    if (g.open === '{' && p.open === '(') return tagged(ordered(g.items, p.items, percent), 'tuple');
    return { equal: false, rule: 'brackets' };
  }
  const sameBrackets = g.open === p.open && g.close === p.close;
  if (!sameBrackets && !(p.open === '' && g.open === '(')) return { equal: false, rule: 'brackets' };
  return tagged(ordered(g.items, p.items, percent), g.items.length === 2 ? 'interval-or-pair' : 'tuple');
}

function ordered(g: readonly Shape[], p: readonly Shape[], percent: PercentFlags): Match {
  if (g.length !== p.length || g.length > MAX_ITEMS) return { equal: false, rule: 'length' };
  for (let k = 0; k < g.length; k++) {
    if (!compareShapes(g[k]!, p[k]!, percent).equal) return { equal: false, rule: `item ${k + 1}` };
  }
  return { equal: true, rule: 'items' };
}

function unordered(g: readonly Shape[], p: readonly Shape[], percent: PercentFlags): Match {
  if (g.length !== p.length || g.length > MAX_ITEMS) return { equal: false, rule: 'length' };
  const used = new Set<number>();
  for (const item of g) {
    const k = p.findIndex((q, idx) => !used.has(idx) && compareShapes(item, q, percent).equal);
    if (k < 0) return { equal: false, rule: 'items' };
    used.add(k);
  }
  return { equal: true, rule: 'items' };
}

function compareMatrices(g: Shape, p: Shape, percent: PercentFlags): Match {
  const cells = (s: Shape): Shape[][] | null => {
    if (s.kind === 'matrix') return s.rows;
    if (s.kind === 'seq' && s.open !== '{') return s.items.map((item) => [item]); // a vector written as a tuple
    return null;
  };
  const gc = cells(g);
  const pc = cells(p);
  if (!gc || !pc) return { equal: false, rule: 'matrix-shape' };
  const flat = (rows: Shape[][]): Shape[] => rows.flat();
  const gVector = gc.every((r) => r.length === 1) || gc.length === 1;
  const pVector = pc.every((r) => r.length === 1) || pc.length === 1;
  const sameShape = gc.length === pc.length && gc.every((r, k) => r.length === pc[k]!.length);
  // Two matrices need the same shape (a row vector is not a column vector); a tuple has no
  // orientation, so it matches either vector.
  const bothMatrices = g.kind === 'matrix' && p.kind === 'matrix';
  if (!sameShape && (bothMatrices || !(gVector && pVector))) return { equal: false, rule: 'matrix-shape' };
  return tagged(ordered(flat(gc), flat(pc), percent), 'matrix');
}

function tagged(match: Match, rule: string): Match {
  return { equal: match.equal, rule: match.equal ? rule : `${rule}: ${match.rule}` };
}

import { findTopLevel, matchBracket, nestingDepth, splitAt } from './latex-groups.js';
import { setBuilderAsIntervals } from './set-builder.js';

export type RelOp = '=' | '<' | '<=' | '>' | '>=' | '!=' | '~' | 'in';
type Open = '(' | '[' | '{' | '';
type Close = ')' | ']' | '}' | '';

/** The outer structure of an answer; scalars inside stay LaTeX until compared. */
export type Shape =
  | { kind: 'expr'; latex: string }
  | { kind: 'seq'; open: Open; close: Close; items: Shape[] }
  | { kind: 'union'; parts: Shape[] }
  | { kind: 'matrix'; rows: Shape[][] }
  | { kind: 'relation'; terms: string[]; ops: RelOp[] }
  | { kind: 'opaque'; latex: string };

/** Past these sizes an answer is compared as a string only: nothing a model writes can make parsing slow. */
export const MAX_SHAPE_CHARS = 2000;
const MAX_DEPTH = 40;
const MAX_PM = 3;

const RELATIONS: ReadonlyArray<[string, RelOp]> = [
  ['\\leqslant', '<='],
  ['\\geqslant', '>='],
  ['\\approx', '~'],
  ['\\leq', '<='],
  ['\\geq', '>='],
  ['\\neq', '!='],
  ['\\le', '<='],
  ['\\ge', '>='],
  ['\\ne', '!='],
  ['\\lt', '<'],
  ['\\gt', '>'],
  ['\\in', 'in'],
  ['<=', '<='],
  ['>=', '>='],
  ['!=', '!='],
  ['=', '='],
  ['<', '<'],
  ['>', '>'],
];
const RELATION_TOKENS = RELATIONS.map(([token]) => token);

/** Splits a normalised answer into relations, unions, sets, tuples, intervals, matrices and lists. */
export function parseShape(text: string, level = 0): Shape {
  const latex = text.trim();
  if (latex.length > MAX_SHAPE_CHARS || level > 8 || nestingDepth(latex, MAX_DEPTH) > MAX_DEPTH) return { kind: 'opaque', latex };
  const builder = latex.startsWith('\\{') ? setBuilderAsIntervals(latex, (t) => parseShape(t, level + 1)) : null;
  if (builder) return builder;
  const groups = assignmentGroups(latex, level);
  if (groups) return groups;
  const commas = findTopLevel(latex, [',', ';']);
  if (commas.length > 0) {
    // "x = 2, y = -1" lists relations; "x = 1, 2" is one relation with a list on its right.
    const parts = splitAt(latex, commas);
    if (parts.every((part) => findTopLevel(part, RELATION_TOKENS).length > 0)) {
      return { kind: 'seq', open: '', close: '', items: parts.map((part) => parseShape(part, level + 1)) };
    }
  }
  const relations = findTopLevel(latex, RELATION_TOKENS);
  if (relations.length > 0) {
    const ops = relations.map((hit) => RELATIONS.find(([token]) => token === hit.token)![1]);
    return { kind: 'relation', terms: splitAt(latex, relations), ops };
  }
  const cups = findTopLevel(latex, ['\\cup']);
  if (cups.length > 0) return { kind: 'union', parts: splitAt(latex, cups).map((p) => parseShape(p, level + 1)) };
  const matrix = parseMatrix(latex, level);
  if (matrix) return matrix;
  const wrapped = unwrap(latex);
  if (wrapped) {
    const items = splitItems(wrapped.inner, level);
    if (wrapped.open === '{' || items.length > 1) return { kind: 'seq', open: wrapped.open, close: wrapped.close, items };
    return parseShape(wrapped.inner, level + 1);
  }
  const items = splitItems(latex, level);
  if (items.length > 1) return { kind: 'seq', open: '', close: '', items };
  return { kind: 'expr', latex };
}

/**
 * `p=5, q=2; p=7, q=2`: groups of assignments separated by `;` state one tuple each, in the
 * order written: the list of tuples `(5, 2), (7, 2)`.
 */
function assignmentGroups(latex: string, level: number): Shape | null {
  const semicolons = findTopLevel(latex, [';']);
  if (semicolons.length === 0) return null;
  const tuples: Shape[] = [];
  for (const group of splitAt(latex, semicolons)) {
    const parts = splitAt(group, findTopLevel(group, [',']));
    const values: Shape[] = [];
    for (const part of parts) {
      const eq = findTopLevel(part, ['=']);
      if (eq.length !== 1 || !/^(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?$/.test(part.slice(0, eq[0]!.index).trim())) return null;
      values.push(parseShape(part.slice(eq[0]!.index + 1), level + 1));
    }
    tuples.push(values.length === 1 ? values[0]! : { kind: 'seq', open: '(', close: ')', items: values });
  }
  return { kind: 'seq', open: '', close: '', items: tuples };
}

function splitItems(inner: string, level: number): Shape[] {
  if (inner.trim() === '') return [];
  const commas = findTopLevel(inner, [',', ';']);
  const parts = splitAt(inner, commas).filter((p) => p !== '');
  const items: Shape[] = [];
  for (const part of parts) {
    const expanded = expandPlusMinus(part);
    for (const e of expanded) items.push(parseShape(e, level + 1));
  }
  return items;
}

/** `1 \pm \sqrt{2}` is the two values `1 + \sqrt{2}` and `1 - \sqrt{2}`. */
export function expandPlusMinus(latex: string): string[] {
  let out = [latex];
  for (let n = 0; n < MAX_PM; n++) {
    const at = out[0]!.search(/\\(?:pm|mp)(?![a-zA-Z])/);
    if (at < 0) break;
    out = out.flatMap((s) => {
      const i = s.search(/\\(?:pm|mp)(?![a-zA-Z])/);
      const flip = s.startsWith('\\mp', i);
      const head = s.slice(0, i);
      const tail = s.slice(i + 3);
      return [`${head}${flip ? '-' : '+'}${tail}`, `${head}${flip ? '+' : '-'}${tail}`];
    });
  }
  return out.map((s) => s.replace(/^\s*\+/, '').trim());
}

function unwrap(latex: string): { open: Open; close: Close; inner: string } | null {
  if (latex.startsWith('\\{') && latex.endsWith('\\}')) {
    let depth = 0;
    for (let i = 0; i < latex.length - 2; i++) {
      if (latex.startsWith('\\{', i)) depth++;
      else if (latex.startsWith('\\}', i) && --depth === 0) return null;
    }
    return { open: '{', close: '}', inner: latex.slice(2, -2) };
  }
  const first = latex[0];
  if (first !== '(' && first !== '[') return null;
  if (matchBracket(latex, 0) !== latex.length - 1) return null;
  return { open: first, close: latex[latex.length - 1] as Close, inner: latex.slice(1, -1) };
}

function parseMatrix(latex: string, level: number): Shape | null {
  const m = /^\\begin\{([pbvBV]?matrix|smallmatrix|array)\}(\{[^}]*\})?/.exec(latex);
  if (!m) return null;
  const end = `\\end{${m[1]}}`;
  if (!latex.endsWith(end)) return null;
  const inner = latex.slice(m[0].length, -end.length).replace(/\\hline/g, '');
  const rows = splitAt(inner, findTopLevel(inner, ['\\\\']))
    .filter((row) => row !== '')
    .map((row) => splitAt(row, findTopLevel(row, ['&'])).map((cell) => parseShape(cell, level + 1)));
  return rows.length > 0 ? { kind: 'matrix', rows } : null;
}

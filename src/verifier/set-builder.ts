import { inequalityAsInterval } from './relations.js';
import type { Shape } from './shape.js';

/** `\{x \mid cond\}`, `\{x : cond\}`, `\{x \in \mathbb{R} | cond\}`: one variable and its condition. */
const SET_BUILDER = /^\\\{\s*([a-zA-Z])\s*(?:\\in\s*(?:\\mathbb\{R\}|\\R|R))?\s*(?:\\mid|\||:|\\colon)\s*(.+?)\s*\\\}$/s;

/**
 * A set written in set-builder notation over one real variable, as the interval (or union of
 * intervals, for conditions listed with "or") it denotes: `\{x \mid x < 3\}` is `(-\infty, 3)`.
 * Null when the condition is not one-variable inequalities in that variable.
 */
export function setBuilderAsIntervals(latex: string, parse: (text: string) => Shape): Shape | null {
  const m = SET_BUILDER.exec(latex.trim());
  if (!m) return null;
  const variable = m[1]!;
  const condition = parse(m[2]!);
  const pieces = condition.kind === 'seq' && condition.open === '' ? condition.items : [condition];
  const intervals: Shape[] = [];
  for (const piece of pieces) {
    if (piece.kind !== 'relation' || !piece.terms.some((t) => t.trim() === variable)) return null;
    const interval = inequalityAsInterval(piece);
    if (!interval) return null;
    intervals.push(interval);
  }
  if (intervals.length === 0) return null;
  return intervals.length === 1 ? intervals[0]! : { kind: 'union', parts: intervals };
}

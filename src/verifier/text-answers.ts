import type { Match } from './match.js';

/** A named choice, alone or followed by its option's text: `C`, `(C)`, `(C) 42`, `C: 42`, `C. 17`, `C) x`. */
const CHOICE = /^(?:(?:option|choice|answer)\s*)?(?:\(\s*([A-J])\s*\)|([A-J])(?![A-Za-z0-9]))(?:\s*[.:)]?(?:\s.*|(?<=[.:)]).*))?$/s;
const WORD = /^[A-Za-z][A-Za-z' -]*[A-Za-z]$/;
const KNOWN_FUNCTIONS = /^(?:sin|cos|tan|sec|csc|cot|log|ln|exp|sqrt|max|min)$/i;

/**
 * Multiple choice: a gold that is one capital letter A–J, bare or as `(C)`, is matched by the
 * letter the model names (`C`, `(C)`, `\text{(C)}`, `(C) 42`, `C: 42`), case-insensitively.
 */
export function compareChoices(gold: string, pred: string): Match | null {
  const g = /^\(?\s*([A-J])\s*\)?$/.exec(gold.trim());
  if (!g) return null;
  const p = CHOICE.exec(pred.trim());
  const letter = p ? (p[1] ?? p[2])! : /^[a-j]$/.test(pred.trim()) ? pred.trim().toUpperCase() : null;
  return { equal: letter === g[1], rule: 'choice' };
}

/** A word answer ("Evelyn", "east", "no solution"): at least one word of three letters. */
export function isTextAnswer(latex: string): boolean {
  const t = latex.trim();
  return WORD.test(t) && /[A-Za-z]{3,}/.test(t) && !KNOWN_FUNCTIONS.test(t);
}

/** Word answers compare case- and punctuation-insensitively, never symbolically. */
export function compareTexts(gold: string, pred: string): Match | null {
  if (!isTextAnswer(gold) && !isTextAnswer(pred)) return null;
  const key = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  return { equal: key(gold) === key(pred), rule: 'text' };
}

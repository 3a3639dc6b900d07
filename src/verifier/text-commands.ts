import { matchBrace } from './latex-groups.js';
import { UNIT_WORDS } from './word-lists.js';

const TEXT_COMMAND = /\\(?:text|textbf|textit|textrm|textsf|texttt|textnormal|mbox|mathrm|mathit|mathbf|mathsf|emph|hbox)\s*\{/g;

/**
 * Rewrites `\text{…}` and its relatives: a unit after a value is dropped (with its `^2`),
 * "and"/"or" become a list comma, anything else is unwrapped to its content.
 */
export function rewriteTextCommands(latex: string): string {
  if (!latex.includes('\\')) return latex;
  let out = '';
  let from = 0;
  TEXT_COMMAND.lastIndex = 0;
  for (let m = TEXT_COMMAND.exec(latex); m; m = TEXT_COMMAND.exec(latex)) {
    if (m.index < from) continue;
    const open = m.index + m[0].length - 1;
    const close = matchBrace(latex, open, 10_000);
    if (close < 0) break;
    const content = latex.slice(open + 1, close);
    let after = close + 1;
    const before = out + latex.slice(from, m.index);
    const word = content.trim().toLowerCase();
    let replacement: string;
    if (word === 'and' || word === 'or' || word === ',') replacement = ', ';
    else if (
      !/^\\math(?:bf|it|sf)/.test(m[0]) &&
      /\S/.test(before.replace(/[\s,]/g, '')) &&
      (isUnitPhrase(word) || isTrailingLabel(word, before, latex.slice(close + 1)))
    ) {
      const power = /^\s*\^\s*(?:\d|\{\d\})/.exec(latex.slice(after));
      if (power) after += power[0].length;
      replacement = ' ';
    } else replacement = content;
    out = before + replacement;
    from = after;
    TEXT_COMMAND.lastIndex = after;
  }
  return out + latex.slice(from);
}

/**
 * `21 \text{ canoes}`, `8 \text{ red marbles}`: words closing the answer right after a value
 * label what is counted, whatever the words are.
 */
function isTrailingLabel(words: string, before: string, after: string): boolean {
  return /^[a-z][a-z' -]*\.?$/.test(words) && words.split(/\s+/).length <= 4 && /[\d}]\s*$/.test(before) && /^[\s.,;]*$/.test(after);
}

/** "cm", " square feet", "m^2", "dollars." — words that only name a unit. */
export function isUnitPhrase(phrase: string): boolean {
  const words = phrase
    .toLowerCase()
    .replace(/\^\s*\{?\d\}?|[²³.]/g, ' ')
    .trim()
    .split(/\s+/);
  if (words.length === 0 || words[0] === '') return false;
  // Inside \text, "in" and single letters are units (inches, metres), not a preposition or variables.
  return words.every((w) => UNIT_WORDS.has(w) || /^[a-z]$/.test(w) || w === 'in' || w === 'per' || w === 'of');
}

/**
 * Drops unit words trailing a value written outside \\text ("125 miles", "15 square feet"), and
 * any words after a plain number ("42 stickers left"): they label what is counted.
 */
export function dropTrailingUnitWords(text: string): string {
  let s = text;
  for (let i = 0; i < 4; i++) {
    const m = /^(.*\S)\s+([a-zA-Z]+)(?:\^\{?\d\}?)?\.?$/.exec(s);
    if (!m || !/\d/.test(m[1]!)) break;
    const word = m[2]!.toLowerCase();
    const label = PLAIN_NUMBER_THEN_WORDS.test(s) && word.length >= 2 && !NOT_LABELS.has(word);
    if (!UNIT_WORDS.has(word) && !label) break;
    s = m[1]!.trim();
  }
  return s;
}

/** A plain number (`42`, `-3.5`, `1,000`, `\frac{7}{2}`) followed only by words. */
const PLAIN_NUMBER_THEN_WORDS = /^[-+]?(?:\d[\d,]*(?:\.\d+)?|\\frac\{\d+\}\{\d+\})(?:\s+[a-zA-Z]+)+\.?$/;
/** Words after a number that change its value or meaning. */
const NOT_LABELS = new Set(['pi', 'sqrt', 'mod', 'or', 'and', 'percent', 'pct', 'factorial']);

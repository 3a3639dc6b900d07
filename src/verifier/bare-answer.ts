import { UNIT_WORDS, wordsToNumber } from './word-lists.js';

/** Longer than this, an output is a solution, not an answer on its own. */
const MAX_BARE_CHARS = 400;

/** Words that do not make an answer a sentence: connectives, function names, percent, infinity. */
const MATH_WORDS = new Set(
  'and or sin cos tan sec csc cot arcsin arccos arctan sinh cosh tanh log ln lg exp sqrt max min det gcd lcm mod pmod lim inf infinity infty pi percent percentage pct per'.split(
    ' ',
  ),
);

/**
 * A model output that is itself an answer, with no sentence around it: `-7`, `12 345`, `3/4`,
 * `x = 5`, `$\frac13$.`, `28 percent`, `10 cm`, `Monday`. `ratchet verify` is often fed answers
 * already extracted, and Math-Verify compares those directly. An output that is one math span
 * (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) is an answer whatever its `\text{}` says. Otherwise no prose
 * word may appear, except a one-word answer or up to three words after a leading value ("42
 * stickers left"); a second sentence or a paragraph break makes it prose. Null when it is prose.
 */
export function bareAnswer(text: string): string | null {
  const t = text.replace(/<\|[\s\S]*$/, '').trim();
  if (t === '' || t.length > MAX_BARE_CHARS) return null;
  const span = wholeMathSpan(t);
  if (span !== null) return span === '' ? null : span;
  if (/\n\s*\n/.test(t) || /[.!?]\s+[A-Z]/.test(t)) return null;
  const words = proseWords(t);
  const leadingValue = /^[-+−(\[{$\\]*\s*\d/.test(t);
  // After a value, a few words label it ("42 stickers left"); without one, only a one-word
  // answer ("Monday", "four") is not a sentence.
  if (leadingValue) return words.length > 3 ? null : t;
  const plain = t.replace(/\\(?:text|textbf|mathrm)\s*\{([^{}]*)\}/g, '$1').trim();
  return words.length === 0 || (words.length === 1 && /^[A-Za-z][A-Za-z-]*\.?$/.test(plain)) ? t : null;
}

/** The content of a math span that is the whole text, allowing trailing sentence punctuation. */
function wholeMathSpan(text: string): string | null {
  const t = text.replace(/[.,;!]+$/, '').trim();
  const pairs: ReadonlyArray<[string, string]> = [
    ['$$', '$$'],
    ['\\[', '\\]'],
    ['\\(', '\\)'],
    ['$', '$'],
  ];
  for (const [open, close] of pairs) {
    if (!t.startsWith(open) || !t.endsWith(close) || t.length < open.length + close.length) continue;
    const inner = t.slice(open.length, t.length - close.length);
    // `$a$ and $b$` is two spans with prose between, not one span.
    if (close === '$' ? /(?<!\\)\$/.test(inner) : inner.includes(close)) continue;
    return inner.trim();
  }
  return null;
}

/** Words of two or more letters that are not LaTeX commands, units, numbers in words or math words. */
function proseWords(text: string): string[] {
  // An environment's name (`\begin{pmatrix}`) and an operator's (`\operatorname{lcm}`) are LaTeX, not prose.
  const latexFree = text.replace(/\\(?:begin|end|operatorname|mathbb|mathcal)\s*\{[^{}]*\}/g, ' ').replace(/\\[a-zA-Z]+/g, ' ');
  const words = latexFree.match(/[A-Za-z]{2,}/g) ?? [];
  return words.filter((w) => {
    const lower = w.toLowerCase();
    return !MATH_WORDS.has(lower) && !UNIT_WORDS.has(lower) && wordsToNumber(lower) === null;
  });
}

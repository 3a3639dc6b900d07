import { matchBrace } from './latex-groups.js';
import { repeatingDecimalsAsFractions } from './repeating-decimal.js';
import { dropTrailingUnitWords, rewriteTextCommands } from './text-commands.js';
import { wordsToNumber } from './word-lists.js';

/** An answer with presentation stripped, ready to be shaped and compared. */
export interface NormalisedAnswer {
  /** Cleaned LaTeX. */
  text: string;
  /** A `%` (or "percent") was written; see the percent policy in POLICIES.md. */
  percent: boolean;
}

const UNICODE: ReadonlyArray<[RegExp, string]> = [
  [/[\u2212\u2012\u2013\u2014]/g, '-'],
  [/×/g, '\\times '],
  [/[·⋅]/g, '\\cdot '],
  [/÷/g, '\\div '],
  [/π/g, '\\pi '],
  [/∞/g, '\\infty '],
  [/√/g, '\\sqrt '],
  [/≤/g, '\\le '],
  [/≥/g, '\\ge '],
  [/≠/g, '\\ne '],
  [/²/g, '^2'],
  [/³/g, '^3'],
  [/[€£¥₹]/g, ''],
  [/\u00a0/g, ' '],
];

/**
 * A doubled backslash before a command name is an escaping slip (`\\frac` written for `\frac`,
 * as in answers copied out of JSON or Python): a LaTeX line break is never followed by these words.
 */
const DOUBLED_COMMAND =
  /(?<!\\)\\\\(?=(?:left|right|frac|dfrac|tfrac|sqrt|le|leq|ge|geq|lt|gt|ne|neq|text|mathrm|boxed|pi|infty|cdot|times|in|cup|pm)(?![a-zA-Z]))/g;

/** Presentation that never changes the value, removed in one pass each. */
const PRESENTATION: ReadonlyArray<[RegExp, string]> = [
  [/\\\$/g, ''],
  [/\$/g, ''],
  [/(?<!\\)\\[()[\]](?![a-zA-Z])/g, ''],
  [/\\(?:left|right)\s*\.(?![0-9])/g, ''],
  [/\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])/g, ''],
  [/\\[dtc]frac(?![a-zA-Z])/g, '\\frac'],
  [/\\[dt]binom(?![a-zA-Z])/g, '\\binom'],
  [/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![a-zA-Z])/g, ''],
  [/,\\!\s*(?=\d{3})/g, ','],
  [/(?<!\\)\\!/g, ''],
  [/(?<!\\)\\[,:;>\s]/g, ' '],
  [/(?<!\\)\\(?:quad|qquad|enspace|thinspace)(?![a-zA-Z])/g, ' '],
  [/~/g, ' '],
  [/\s*\{\s*,\s*\}\s*/g, ','],
  [/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°/g, ''],
  [/\b(?:degrees?)\s*$/i, ''],
  [/\\(sin|cos|tan|sec|csc|cot)\s*\^\s*\{\s*-\s*1\s*\}/g, '\\arc$1'],
  [/\\(?:infin|infinity)(?![a-zA-Z])/g, '\\infty'],
  [/(^|[^a-zA-Z\\])(?:infinity|inf)(?![a-zA-Z])/gi, '$1\\infty'],
  [/\\sqrt\s*([0-9a-zA-Z])/g, '\\sqrt{$1}'],
  [/\\frac\s*([0-9])\s*([0-9])/g, '\\frac{$1}{$2}'],
  [/\\frac\s*([0-9])\s*\{/g, '\\frac{$1}{'],
  [/\\frac\s*(\{[^{}]*\})\s*([0-9])/g, '\\frac$1{$2}'],
];

const PERCENT = /\\?%|\s*(?:\b|(?<=\d))(?:percent(?:age)?|pct|per\s*cent)\s*\.?\s*$/gi;
const MAX_NORMALISE_CHARS = 20_000;

/** Strips presentation from an extracted answer (AReaL's strip_string, made explicit). */
export function normaliseAnswer(raw: string): NormalisedAnswer {
  let s = raw.length > MAX_NORMALISE_CHARS ? raw.slice(0, MAX_NORMALISE_CHARS) : raw;
  for (const [re, to] of UNICODE) s = s.replace(re, to);
  s = s.replace(DOUBLED_COMMAND, '\\');
  // A line break between an integer and a fraction does not make a mixed number ("11\n5/6").
  s = s.replace(/(\d)[^\S\n]*\r?\n\s*(?=\d+\s*\/\s*\d)/g, '$1 \\cdot ');
  s = unwrapBoxes(s);
  for (const [re, to] of PRESENTATION) s = s.replace(re, to);
  s = repeatingDecimalsAsFractions(s);
  // "6 and 8", "21, 16 or 11", "(11,7)or(7,11)": alternatives listed in words are a list.
  s = rewriteTextCommands(s)
    .replace(/(\S)\s+(?:and|or)\s+(?=\S)/g, '$1, ')
    .replace(/([)\]])\s*or\s*(?=[([])/g, '$1, ');
  const percent = /\\?%|(?:\b|(?<=\d))(?:percent|pct\b|per\s*cent\b)/i.test(s);
  if (percent) s = s.replace(PERCENT, '');
  s = dropGroupingBraces(trimPunctuation(s.replace(/\s+/g, ' ').trim()));
  s = s.replace(/^[a-zA-Z]\s*\\in\s+|^[a-zA-Z]\s*\\in(?=[[({\\])/, '');
  s = dropTrailingUnitWords(s);
  s = dropDigitGroupSeparators(s);
  s = mixedNumbers(s);
  s = s.replace(/(^|[^\d])\.(\d)/g, '$10.$2');
  const words = /^[a-zA-Z][a-zA-Z\s-]*$/.test(s) ? wordsToNumber(s) : null;
  if (words !== null) s = String(words);
  return { text: trimPunctuation(s.replace(/\s+/g, ' ').trim()), percent };
}

/** The string used for exact matching: no whitespace, `^{2}` written as `^2`. */
export function answerKey(text: string): string {
  return text.replace(/\s+/g, '').replace(/([\^_])\{([a-zA-Z0-9])\}/g, '$1$2');
}

/** `{1,3}`: braces without a backslash around the whole answer group, they do not make a set. */
function dropGroupingBraces(s: string): string {
  let out = s;
  for (let guard = 0; guard < 4 && out.startsWith('{') && matchBrace(out, 0, 20_000) === out.length - 1; guard++) out = out.slice(1, -1).trim();
  return out;
}

function unwrapBoxes(s: string): string {
  let out = s;
  for (let guard = 0; guard < 8; guard++) {
    const m = /\\(?:boxed|fbox)\s*\{/.exec(out);
    if (!m) break;
    const open = m.index + m[0].length - 1;
    const close = matchBrace(out, open, 20_000);
    if (close < 0) break;
    out = out.slice(0, m.index) + out.slice(open + 1, close) + out.slice(close + 1);
  }
  return out;
}

/** Sentence punctuation around an answer; an ellipsis is content, not punctuation. */
function trimPunctuation(s: string): string {
  let out = s;
  for (let guard = 0; guard < 8; guard++) {
    const before = out;
    out = out.replace(/^[:=\s]+/, '').replace(/(?:\\\\|[\s,;:?])+$/, '');
    if (/[^.]\.$/.test(out) && !/\\[a-z]*dots$/.test(out)) out = out.slice(0, -1);
    out = out.trim();
    if (out === before) break;
  }
  return out;
}

/** `1,000`, `10,000.5`, `1 000 000`: group separators only when the whole value is one number. */
function dropDigitGroupSeparators(s: string): string {
  const whole = (t: string): string =>
    /^[-+]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$/.test(t) || /^[-+]?[1-9]\d{0,2}(?: \d{3})+(?:\.\d+)?$/.test(t) ? t.replace(/[, ]/g, '') : t;
  const eq = s.lastIndexOf('=');
  if (eq > 0 && s.indexOf('=') === eq) return `${s.slice(0, eq + 1)}${whole(s.slice(eq + 1).trim())}`;
  return whole(s);
}

/**
 * `3\frac{1}{2}` and `3 1/2` are mixed numbers (MATH writes them so), but only with a proper
 * fraction and not after `^`, `_` or another digit group; see POLICIES.md.
 */
function mixedNumbers(s: string): string {
  const proper = (whole: string, num: string, den: string, frac: string): string | null =>
    Number(num) < Number(den) && Number(den) > 0 ? `(${whole}+${frac})` : null;
  let out = s.replace(/(^|[\s(=,[+-])(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}/g, (all, pre: string, w: string, n: string, d: string) => {
    const r = proper(w, n, d, `\\frac{${n}}{${d}}`);
    return r === null ? all : pre + r;
  });
  out = out.replace(/(^|[\s(=,[+-])(\d{1,3}(?: \d{3})+|\d+) (\d+)\/(\d+)(?=$|[\s),\]])/g, (all, pre: string, w: string, n: string, d: string) => {
    const r = proper(w.replace(/ /g, ''), n, d, `\\frac{${n}}{${d}}`);
    return r === null ? all : pre + r;
  });
  return out;
}

import { bareAnswer } from './bare-answer.js';
import { lastMathAnswer } from './last-math.js';
import { matchBrace } from './latex-groups.js';
import type { AnswerExtraction } from './types.js';

/** Longest box content we look at; a longer "answer" is not an answer. */
const MAX_BOX_CHARS = 20_000;
/** How many `\boxed` openings we try from the end before giving up (unbalanced-brace spam). */
const MAX_BOX_TRIES = 64;

interface Span {
  start: number;
  end: number;
  content: string;
}

/**
 * The final answer in a model output, or null when it states none.
 * Looks for, in order of trust: the last `\boxed{}` / `\fbox{}` (the boxes of the final statement
 * are joined into a list, see POLICIES.md), an answer statement written after it ("final answer
 * is …", "the answer is …", "Answer: …", "$…$ is the solution"), and GSM8K's `#### n`; failing
 * those, an output that is itself an answer (`-7`, `$\frac13$`, `x = 5`). A last number or math
 * span in prose counts only with `extraction: 'math-verify'` (AReaL's `use_last_number=False`
 * for model outputs is the default).
 */
export function extractModelAnswer(text: string, extraction: AnswerExtraction = 'stated'): string | null {
  if (cutOffInsideBox(text)) return null;
  const stated = statedAnswer(text);
  if (stated !== null) return stated;
  return bareAnswer(text) ?? (extraction === 'math-verify' ? lastMathAnswer(text) : null);
}

/**
 * The output ends inside its last `\boxed{` (the length limit cut the turn while it wrote its answer): whatever the
 * box holds so far is not an answer it stated, and judging it would score a truncation as `wrong`. Everything after an
 * unclosed box is inside it, so no later statement can stand instead.
 */
function cutOffInsideBox(text: string): boolean {
  const re = /\\(?:boxed|fbox)\s*\{/g;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m;
  return last !== null && matchBrace(text, last.index + last[0].length - 1) < 0;
}

function statedAnswer(text: string): string | null {
  const candidates: Array<{ at: number; content: string; trusted: boolean }> = [];
  const boxes = finalBoxes(text);
  if (boxes.length > 0)
    candidates.push({ at: boxes[boxes.length - 1]!.start, content: boxes.map((b) => b.content.trim()).join(', '), trusted: true });
  const statement = lastStatement(text);
  // "\boxed{5}. The answer is correct" must not override the box: a statement counts only when it looks like math.
  if (statement && statement.content !== '')
    candidates.push({ at: statement.start, content: statement.content, trusted: looksLikeMath(statement.content) });
  const hashes = text.lastIndexOf('####');
  const gsm8k = gsm8kAnswer(text);
  if (gsm8k !== null) candidates.push({ at: hashes, content: gsm8k, trusted: true });
  // The answer stated last wins: "\boxed{200} … \boxed{255} … The final answer is $10,455$".
  const trusted = candidates.filter((c) => c.trusted).sort((a, b) => b.at - a.at)[0];
  const chosen = trusted ?? candidates[0];
  return chosen ? chosen.content.replace(/<<[^<>]*>>/g, '').trim() || null : null;
}

/**
 * The last box, plus the boxes of the same final statement before it: separated only by
 * commas, "and" / "or", spacing, part labels ("(b)", "for part (a)"), the name a box gives a
 * value (`f(x) = \boxed{…}, g(x) = \boxed{…}`) or one word labelling a box before "and" or a comma.
 */
export function finalBoxes(text: string): Span[] {
  const starts: number[] = [];
  const re = /\\(?:boxed|fbox)\s*\{/g;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index);
  const found: Span[] = [];
  let tries = 0;
  for (let k = starts.length - 1; k >= 0 && tries < MAX_BOX_TRIES; k--, tries++) {
    const start = starts[k]!;
    const open = text.indexOf('{', start);
    const close = matchBrace(text, open, MAX_BOX_CHARS);
    if (close < 0) continue;
    const span = { start, end: close, content: text.slice(open + 1, close) };
    const later = found[0];
    if (later && span.end > later.start) {
      found[0] = span; // a box inside a box: keep the outer one
      continue;
    }
    if (later && !isBoxSeparator(text.slice(span.end + 1, later.start))) break;
    found.unshift(span);
  }
  if (found.length === 0) {
    const bare = /\\boxed\s+([^\s${}\\]+)/g;
    let last: RegExpExecArray | null = null;
    for (let m = bare.exec(text); m; m = bare.exec(text)) last = m;
    if (last) found.push({ start: last.index, end: last.index + last[0].length, content: last[1]! });
  }
  return found;
}

/** Words that may join the boxes of one statement; anything else ("wrong", "possibly") ends it. */
const JOINING_WORDS = /\b(?:and|or|for|part|parts|case|cases|the|answer|answers|is|are|it|to|of|respectively)\b/gi;
/** A value's name before its box: `y_2 =`, `f(x) =`, `\theta =`. */
const VALUE_NAME = /(?<![A-Za-z])(?:\\[a-zA-Z]+|[a-zA-Z])(?:_\{?\w+\}?)?(?:\(\s*[a-z]\s*\))?\s*=/g;

/** A word right after a box, then "and" or a comma: the word labels the box ("papers and"). */
const LABEL_THEN_CONNECTIVE = /^[\s$]*(?:\\text\s*\{\s*)?[A-Za-z]+\s*\}?[\s$]*(?:and\b|[,;])/;

function isBoxSeparator(gap: string): boolean {
  if (gap.length > 80 || /[.!?]\s+[A-Z]|\n\s*\n/.test(gap)) return false;
  const rest = gap
    .replace(/\\(?:text|textbf|mathrm)\s*\{([^{}]*)\}/g, ' $1 ')
    .replace(/\\(?:quad|qquad|,|;|!)/g, ' ')
    .replace(VALUE_NAME, ' ')
    .replace(/\(\s*(?:[a-h]|i{1,3}|iv|vi{0,3})\s*\)/gi, ' ')
    .replace(JOINING_WORDS, ' ')
    .replace(/[,;:$&]|\\\\|\\\(|\\\)|\\\[|\\\]/g, ' ')
    .trim();
  // One word may label the box before a connective: "\boxed{1} papers and \boxed{2} bins".
  return rest === '' || (/^[A-Za-z]+$/.test(rest) && LABEL_THEN_CONNECTIVE.test(gap));
}

const STATEMENT = /(?:final answer\s*(?:is|:)|the answer is|the solution is|answer\s*:|\banswer(?=\s*(?:\$|\\[([]))|答案是)[\s:*]*/gi;
/** "Therefore $x \ge 5$ is the solution.": the answer stated before the words that name it. */
const STATED_BEFORE = /(\$\$?)([^$]+?)\1\s+is\s+(?:the|our)\s+(?:final\s+)?(?:answer|solution)\b/gi;

/** The text after the last answer statement, cut to its first math span or sentence. */
function lastStatement(text: string): Span | null {
  let last: RegExpExecArray | null = null;
  STATEMENT.lastIndex = 0;
  for (let m = STATEMENT.exec(text); m; m = STATEMENT.exec(text)) last = m;
  const before = lastStatedBefore(text);
  if (!last) return before;
  const start = last.index + last[0].length;
  const content = statementAnswer(text.slice(start, start + 2000));
  const after = content === null ? null : { start: last.index, end: start, content };
  return before && (!after || before.start > after.start) ? before : after;
}

function lastStatedBefore(text: string): Span | null {
  let last: RegExpExecArray | null = null;
  STATED_BEFORE.lastIndex = 0;
  for (let m = STATED_BEFORE.exec(text); m; m = STATED_BEFORE.exec(text)) last = m;
  return last ? { start: last.index, end: last.index + last[0].length, content: last[2]!.trim() } : null;
}

function statementAnswer(text: string): string | null {
  // A chat template's next turn (`<|im_start|>user`) is not part of the answer.
  const rest = text.replace(/\*\*/g, '').split('<|')[0]!;
  // Display math (`$$…$$`, `\[…\]`) may span lines; inline math may not.
  const display = leadingMath(rest.trimStart(), true);
  if (display !== null) return display;
  const line = (rest.split('\n')[0] ?? '').trim() || (rest.trim().split('\n')[0] ?? '').trim();
  const math = leadingMath(line);
  if (math !== null) return math;
  let sentence = line.split(/\.\s+(?=[A-Z(])|\s+I hope\b/)[0] ?? '';
  // "The largest $n$ is 34." names the quantity first; the answer follows the last " is ".
  const is = sentence.lastIndexOf(' is ');
  if (is >= 0) sentence = sentence.slice(is + 4);
  // A quoted answer: "$12$ and $13$".
  sentence = sentence.trim().replace(/^\\?"(.*?)\\?"(?=[.\s]*$)/, '$1');
  const inner = leadingMath(sentence);
  if (inner !== null && /^[.\s]*$/.test(sentence.slice(mathSpanLength(sentence)))) return inner;
  const answer = sentence.trim().replace(/[.\s]+$/, '');
  return loneNumber(answer) ?? (answer || null);
}

/** "Jane started growing Sphere 3 hours ago": a sentence in words around one number states that number. */
function loneNumber(sentence: string): string | null {
  if (/[$\\^=]/.test(sentence) || (sentence.match(/[a-zA-Z]{2,}/g) ?? []).length < 2) return null;
  const numbers = sentence.match(/(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w.])/g);
  return numbers && numbers.length === 1 ? numbers[0]! : null;
}

const MATH_DELIMITERS = [
  ['$$', '$$'],
  ['$', '$'],
  ['\\(', '\\)'],
  ['\\[', '\\]'],
] as const;

/** The content of a `$…$`, `$$…$$`, `\(…\)` or `\[…\]` span that opens the text (only display math when `displayOnly`). */
function leadingMath(text: string, displayOnly = false): string | null {
  for (const [open, close] of MATH_DELIMITERS) {
    if (displayOnly && open !== '$$' && open !== '\\[') continue;
    if (!text.startsWith(open)) continue;
    const end = closingDelimiter(text, open, close);
    if (end > open.length) return text.slice(open.length, end).trim();
  }
  return null;
}

function mathSpanLength(text: string): number {
  for (const [open, close] of MATH_DELIMITERS) {
    if (!text.startsWith(open)) continue;
    const end = closingDelimiter(text, open, close);
    if (end > open.length) return end + close.length;
  }
  return 0;
}

/** Where the span opened by `open` closes; an escaped `\$` is a dollar sign, not a delimiter. */
function closingDelimiter(text: string, open: string, close: string): number {
  let end = text.indexOf(close, open.length);
  while (close.startsWith('$') && end > 0 && text[end - 1] === '\\') end = text.indexOf(close, end + 1);
  return end;
}

function looksLikeMath(candidate: string): boolean {
  return /[0-9\\^=]/.test(candidate) || /^[A-E]$/.test(candidate.trim());
}

/** GSM8K's `#### 72`: the rest of the last such line. */
export function gsm8kAnswer(text: string): string | null {
  const at = text.lastIndexOf('####');
  if (at < 0) return null;
  const line = text
    .slice(at + 4)
    .split('\n')[0]!
    .trim();
  return line === '' ? null : line;
}

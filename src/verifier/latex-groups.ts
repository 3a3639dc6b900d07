/**
 * Brace and bracket scanning over LaTeX. Every scan is linear and bounded, because the text
 * comes from a model and may be 100 KB of unbalanced braces.
 */

const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** Index of the `}` closing the group opened at `open`, or -1 (unbalanced, or longer than maxScan). */
export function matchBrace(text: string, open: number, maxScan = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  const end = Math.min(text.length, open + maxScan);
  for (let i = open; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      i++; // `\{` and `\}` are literal braces, `\\` a line break: neither opens a group.
      continue;
    }
    if (c === OPEN_BRACE) depth++;
    else if (c === CLOSE_BRACE && --depth === 0) return i;
  }
  return -1;
}

/** Deepest nesting of (), [], {} in the text; stops counting past `limit`. */
export function nestingDepth(text: string, limit = 1000): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(' || ch === '[' || ch === '{') {
      depth++;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
  }
  return max;
}

/** A position in `text` at bracket depth 0, with the separator found there. */
export interface TopLevelHit {
  index: number;
  token: string;
}

/**
 * Finds the top-level occurrences of `tokens` (longest first), outside (), [], {}, \{\} and
 * \begin…\end. Half-open intervals such as `[0,1)` close on either bracket.
 */
export function findTopLevel(text: string, tokens: readonly string[]): TopLevelHit[] {
  const hits: TopLevelHit[] = [];
  let depth = 0;
  outer: for (let i = 0; i < text.length; i++) {
    if (depth === 0) {
      for (const token of tokens) {
        if (text.startsWith(token, i) && !continuesCommand(text, i, token)) {
          hits.push({ index: i, token });
          i += token.length - 1;
          continue outer;
        }
      }
    }
    const ch = text[i];
    if (ch === '\\') {
      const next = text[i + 1];
      if (text.startsWith('\\begin{', i)) depth++;
      else if (text.startsWith('\\end{', i)) depth--;
      else if (next === '{') depth++;
      else if (next === '}') depth--;
      if (next === '{' || next === '}' || next === '\\') i++;
    } else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  return hits;
}

// `\le` must not match the start of `\left`, nor `\in` the start of `\infty`.
function continuesCommand(text: string, index: number, token: string): boolean {
  if (!/^\\[a-zA-Z]+$/.test(token)) return false;
  const next = text[index + token.length];
  return next !== undefined && /[a-zA-Z]/.test(next);
}

/** Splits at the given top-level hits, dropping the separators. */
export function splitAt(text: string, hits: readonly TopLevelHit[]): string[] {
  const parts: string[] = [];
  let start = 0;
  for (const hit of hits) {
    parts.push(text.slice(start, hit.index));
    start = hit.index + hit.token.length;
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

/** Index of the bracket closing the one at `open` ( `(` or `[` ), accepting either closer. */
export function matchBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if ((ch === ')' || ch === ']' || ch === '}') && --depth === 0) return i;
  }
  return -1;
}

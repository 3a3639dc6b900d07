/**
 * Math-Verify-compatible extraction (the `math-verify` option): the last math span of the text
 * (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`), or its last number if that comes later (`2/3`, `1,000.99`,
 * `100%`). Text after a chat template's next turn (`<|im_start|>`) is not read. Null when the
 * text has neither.
 */
export function lastMathAnswer(text: string): string | null {
  const body = text.split('<|')[0]!;
  const span = lastMathSpan(body);
  const number = lastNumber(body);
  if (span && (!number || span.end >= number.end)) return span.content;
  return number ? number.content : null;
}

interface Found {
  end: number;
  content: string;
}

const SPAN = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|(?<!\\)\$((?:[^$\\]|\\[\s\S])+?)\$/g;

function lastMathSpan(text: string): Found | null {
  let last: Found | null = null;
  SPAN.lastIndex = 0;
  for (let m = SPAN.exec(text); m; m = SPAN.exec(text)) {
    const content = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim();
    if (content !== '') last = { end: m.index + m[0].length, content };
  }
  return last;
}

const NUMBER = /(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:\s+\d+\/\d+|\/\d+)?(?:\s*%)?/g;

function lastNumber(text: string): Found | null {
  let last: Found | null = null;
  NUMBER.lastIndex = 0;
  for (let m = NUMBER.exec(text); m; m = NUMBER.exec(text)) last = { end: m.index + m[0].length, content: m[0].replace(/,$/, '').trim() };
  return last;
}

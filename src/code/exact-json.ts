/** A JSON value with its numbers kept as written, so that no integer is rounded to a double. */
export type ExactJson = null | boolean | string | { number: string } | ExactJson[] | { object: Map<string, ExactJson> };

/**
 * Parses JSON as Python's `json.dumps` writes it (NaN, Infinity and -Infinity included), keeping each number's
 * text. Undefined when the text is not one JSON value.
 */
export function parseExactJson(text: string): ExactJson | undefined {
  let at = 0;
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const fail = (): never => {
    throw new SyntaxError(`not JSON at ${at}`);
  };
  const value = (depth: number): ExactJson => {
    if (depth > 1_000) fail();
    space();
    const rest = text.slice(at, at + 9);
    for (const [word, result] of [
      ['null', null],
      ['true', true],
      ['false', false],
    ] as const) {
      if (rest.startsWith(word)) {
        at += word.length;
        return result;
      }
    }
    const numberEnd = scanNumber(text, at);
    if (numberEnd > at) {
      const number = text.slice(at, numberEnd);
      at = numberEnd;
      return { number };
    }
    if (text[at] === '"') {
      const end = scanString(text, at);
      if (end < 0) fail();
      const string = text.slice(at, end);
      at = end;
      return JSON.parse(string) as string;
    }
    const open = text[at];
    if (open !== '[' && open !== '{') fail();
    at++;
    const items: ExactJson[] = [];
    const object = new Map<string, ExactJson>();
    space();
    if (text[at] === (open === '[' ? ']' : '}')) {
      at++;
      return open === '[' ? items : { object };
    }
    for (;;) {
      if (open === '[') items.push(value(depth + 1));
      else {
        const key = value(depth + 1);
        if (typeof key !== 'string') fail();
        space();
        if (text[at++] !== ':') fail();
        object.set(key as string, value(depth + 1));
      }
      space();
      const next = text[at++];
      if (next === (open === '[' ? ']' : '}')) return open === '[' ? items : { object };
      if (next !== ',') fail();
    }
  };
  try {
    const result = value(0);
    space();
    return at === text.length ? result : undefined;
  } catch {
    return undefined;
  }
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/**
 * Where the JSON number (or NaN, Infinity, -Infinity) starting at `from` ends, or `from` when none starts there.
 * A hand-written scan, linear whatever the length: an integer of a million digits is one number.
 */
function scanNumber(text: string, from: number): number {
  for (const word of ['NaN', 'Infinity', '-Infinity']) if (text.startsWith(word, from)) return from + word.length;
  let at = from;
  const digits = (): number => {
    const start = at;
    while (at < text.length && isDigit(text.charCodeAt(at))) at++;
    return at - start;
  };
  if (text[at] === '-') at++;
  if (text[at] === '0') at++;
  else if (digits() === 0) return from;
  if (text[at] === '.') {
    at++;
    if (digits() === 0) return from;
  }
  if (text[at] === 'e' || text[at] === 'E') {
    at++;
    if (text[at] === '+' || text[at] === '-') at++;
    if (digits() === 0) return from;
  }
  return at;
}

/** Where the JSON string opening at `from` closes (just past its quote), or -1 when it is not one. */
function scanString(text: string, from: number): number {
  for (let at = from + 1; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 34) return at + 1;
    if (code < 0x20) return -1;
    if (code === 92) {
      const escape = text[++at];
      if (escape === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) return -1;
        at += 4;
      } else if (escape === undefined || !'"\\/bfnrt'.includes(escape)) return -1;
    }
  }
  return -1;
}

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
    for (const [word, result] of [['null', null], ['true', true], ['false', false]] as const) {
      if (rest.startsWith(word)) {
        at += word.length;
        return result;
      }
    }
    const number = /^(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|NaN|-?Infinity)/.exec(text.slice(at, at + 4096));
    if (number) {
      at += number[0].length;
      return { number: number[0] };
    }
    if (text[at] === '"') {
      const string = /^"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/.exec(text.slice(at));
      if (!string) fail();
      at += string![0].length;
      return JSON.parse(string![0]) as string;
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

/**
 * Postgres `text` cannot hold U+0000 (it fails the statement with SQLSTATE 22021), and a lone UTF-16
 * surrogate has no UTF-8 form (pg would silently write U+FFFD for it). A model's answer, a dataset's qid or an
 * error message may contain either, and must not make a trajectory unstorable, so both become U+FFFD here.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  return text === null ? null : text.replace(UNSTORABLE, '\uFFFD');
}

/**
 * A JSON value as jsonb text: every string in it (keys too) made storable, since jsonb refuses `\u0000` and lone
 * surrogates as text does. What an environment returns is the model's adversary's to shape: it must store.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'string') return storableText(item);
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [storableText(key), inner]));
    }
    return item;
  });
}

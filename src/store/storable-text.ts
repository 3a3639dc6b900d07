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

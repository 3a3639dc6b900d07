import type { RowError } from '../datasets/row-error.js';

/** Row errors printed one per line before the rest are only counted. */
const SHOWN = 5;

/**
 * What a dataset's skipped rows look like on stderr: a binary or non-UTF-8 file is one line with a count (not one
 * per line of garbage), other malformed rows the first few by file:line and then a count.
 */
export function describeRowErrors(file: string, errors: readonly RowError[]): string[] {
  const encoding = errors.filter((error) => error.message.startsWith('not valid UTF-8') || error.message.includes('NUL'));
  const other = errors.filter((error) => !encoding.includes(error));
  const lines: string[] = [];
  if (encoding.length > 0) {
    lines.push(
      `skipped ${encoding.length} lines of ${file} that are not UTF-8 text (first: line ${encoding[0]!.line}); is it a binary file? re-encode it as UTF-8 JSON lines`,
    );
  }
  for (const error of other.slice(0, SHOWN)) lines.push(`skipped ${String(error)}`);
  if (other.length > SHOWN) lines.push(`skipped ${other.length - SHOWN} more malformed rows of ${file} (${other.length} in all)`);
  return lines;
}

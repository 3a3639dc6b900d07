/** AReaL skips shorter blocks: they are placeholders or fragments, never a whole solution. */
export const MIN_CODE_CHARS = 20;

const FENCE = /```([^\n`]*)\n([\s\S]*?)```/g;
const PYTHON_TAGS = new Set(['', 'python', 'python3', 'py']);

/**
 * The answer's code, as AReaL's `extract_code` picks it: the last fenced block (```python, ```py or bare)
 * with at least 20 characters after trimming; null when there is none (no answer). Blocks tagged with
 * another language are skipped, as the sandbox only runs Python.
 */
export function extractCode(answer: string): string | null {
  let last: string | null = null;
  for (const match of answer.matchAll(FENCE)) {
    const tag = (match[1] ?? '').trim().toLowerCase();
    const block = (match[2] ?? '').trim();
    if (PYTHON_TAGS.has(tag) && block.length >= MIN_CODE_CHARS) last = block;
  }
  return last;
}

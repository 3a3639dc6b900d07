import { extractModelAnswer } from './extract-model.js';

/** A gold field longer than this that reads as prose is a worked solution, not a bare answer. */
const PROSE_CHARS = 80;

/**
 * The gold answer(s) as datasets store them: a bare answer (MATH's `answer`), a solution with
 * `\boxed{}` (MATH's `solution`), a GSM8K worked answer ending in `#### n`, or a list of
 * solutions in the AReaL shape, where matching any one counts.
 */
export function extractGoldAnswers(gold: string | readonly string[]): string[] {
  const list = typeof gold === 'string' ? [gold] : gold;
  const answers = new Set<string>();
  for (const item of list) {
    if (typeof item !== 'string') continue;
    const answer = extractOneGold(item);
    if (answer !== null) answers.add(answer);
  }
  return [...answers];
}

function extractOneGold(gold: string): string | null {
  const text = gold.trim();
  if (text === '') return null;
  if (/\\(?:boxed|fbox)|####|answer is|final answer|answer\s*:/i.test(text)) {
    const stated = extractModelAnswer(text);
    if (stated !== null) return stated;
  }
  if (text.length > PROSE_CHARS && /[a-z]{3,}\s+[a-z]{3,}\s+[a-z]{3,}/i.test(text.replace(/\\text\{[^}]*\}/g, ''))) {
    // AReaL reads the last number of a gold solution that states no answer (use_last_number=True).
    const numbers = text.match(/-?\d[\d,]*(?:\.\d+)?/g);
    if (numbers) return numbers[numbers.length - 1]!.replace(/,/g, '');
  }
  return text;
}

/** A decoded answer split for display: the reasoning inside `<think>…</think>`, and what follows it. */
export interface AnswerParts {
  reasoning: string | null;
  answer: string;
}

/**
 * Qwen3-style reasoning models wrap their reasoning in `<think>` tags (plain added tokens, so the decoded text keeps
 * them). An unclosed `<think>` (a turn cut off by the length limit) is all reasoning.
 */
export function splitReasoning(text: string): AnswerParts {
  const open = text.indexOf('<think>');
  if (open < 0) return { reasoning: null, answer: text };
  const close = text.indexOf('</think>', open);
  if (close < 0) return { reasoning: text.slice(open + 7).trim(), answer: text.slice(0, open).trim() };
  return { reasoning: text.slice(open + 7, close).trim(), answer: (text.slice(0, open) + text.slice(close + 8)).trim() };
}

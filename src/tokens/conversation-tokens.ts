import type { ModelTokenizer } from './model-tokenizer.js';
import { feedbackText, mathUserMessage } from './math-prompt.js';

/** Prompt ids: the problem rendered by the model's chat template, ready for the assistant's first turn. */
export function promptIds(tokenizer: ModelTokenizer, problem: string): number[] {
  return tokenizer.encode(tokenizer.renderChat([{ role: 'user', content: mathUserMessage(problem) }], true));
}

export interface FeedbackTokens {
  ids: number[];
  text: string;
}

/**
 * Tokens to append after a turn's output: what the chat template puts after an assistant message, then the
 * feedback as a user turn and the next generation prompt. They come from the template's own rendering (the
 * difference between a conversation with and without the feedback turn), never from re-rendering history,
 * because templates such as Qwen3's rewrite earlier assistant turns (dropping `<think>` blocks).
 * A turn cut off by the length limit has no EOS, so the end-of-turn token is added first.
 */
export function feedbackTokens(tokenizer: ModelTokenizer, success: boolean, outputHadEos: boolean): FeedbackTokens {
  const text = (outputHadEos ? '' : tokenizer.eosToken) + afterEos(tokenizer) + userTurnSuffix(tokenizer, feedbackText(success));
  return { ids: tokenizer.encode(text), text };
}

const SENTINEL = '\u2063RATCHET-ANSWER\u2063';

/** What the template writes after an assistant message's EOS (Qwen3: "\n"). */
function afterEos(tokenizer: ModelTokenizer): string {
  const rendered = tokenizer.renderChat([{ role: 'user', content: 'q' }, { role: 'assistant', content: SENTINEL }], false);
  const tail = rendered.slice(rendered.lastIndexOf(SENTINEL) + SENTINEL.length);
  if (!tail.startsWith(tokenizer.eosToken)) {
    throw new Error(`chat template of ${tokenizer.directory} does not end an assistant turn with ${tokenizer.eosToken}`);
  }
  return tail.slice(tokenizer.eosToken.length);
}

/** The user turn plus generation prompt that the template appends after a finished assistant turn. */
function userTurnSuffix(tokenizer: ModelTokenizer, feedback: string): string {
  const history = [{ role: 'user', content: 'q' }, { role: 'assistant', content: SENTINEL }] as const;
  const before = tokenizer.renderChat(history, false);
  const after = tokenizer.renderChat([...history, { role: 'user', content: feedback }], true);
  if (!after.startsWith(before)) {
    throw new Error(`chat template of ${tokenizer.directory} rewrites history when a user turn is added`);
  }
  return after.slice(before.length);
}

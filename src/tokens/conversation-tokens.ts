import type { ChatMessage, ModelTokenizer } from './model-tokenizer.js';
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
 * feedback as a user turn and the next generation prompt. They are cut from the template's own rendering of
 * a conversation in which the assistant turn is followed by the feedback, never from re-rendering history:
 * templates such as Qwen3's render the same assistant turn differently depending on what follows it.
 * A turn cut off by the length limit has no EOS, so the end-of-turn token is added first.
 */
export function feedbackTokens(tokenizer: ModelTokenizer, success: boolean, outputHadEos: boolean): FeedbackTokens {
  return observationTokens(tokenizer, [{ role: 'user', content: feedbackText(success) }], outputHadEos);
}

/**
 * The same cut for any environment's observation messages (any role the template knows: `user`, `tool`, `system`):
 * what follows the assistant turn, the messages, and the next generation prompt. No messages: only the end of the
 * assistant turn and the generation prompt.
 */
export function observationTokens(tokenizer: ModelTokenizer, messages: readonly ChatMessage[], outputHadEos: boolean): FeedbackTokens {
  const tail = afterAssistant(tokenizer, messages);
  const text = outputHadEos ? tail.slice(tokenizer.eosToken.length) : tail;
  return { ids: tokenizer.encode(text), text };
}

/** An episode's first tokens: its messages rendered with the generation prompt, or a prompt already rendered. */
export function startIds(tokenizer: ModelTokenizer, start: { messages: readonly ChatMessage[] } | { renderedPrompt: string }): number[] {
  if ('renderedPrompt' in start) return tokenizer.encode(start.renderedPrompt);
  return tokenizer.encode(tokenizer.renderChat(start.messages, true));
}

export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError';
}

const SENTINEL = '\u2063RATCHET-ANSWER\u2063';

/** Everything the template renders after an assistant message's content when these messages follow it. */
function afterAssistant(tokenizer: ModelTokenizer, messages: readonly ChatMessage[]): string {
  const rendered = tokenizer.renderChat([{ role: 'user', content: 'q' }, { role: 'assistant', content: SENTINEL }, ...messages], true);
  const at = rendered.indexOf(SENTINEL);
  if (at < 0) throw new ChatTemplateError(`chat template of ${tokenizer.directory} does not render assistant content verbatim`);
  const tail = rendered.slice(at + SENTINEL.length);
  if (!tail.startsWith(tokenizer.eosToken)) {
    throw new ChatTemplateError(`chat template of ${tokenizer.directory} does not end an assistant turn with ${tokenizer.eosToken}`);
  }
  return tail;
}

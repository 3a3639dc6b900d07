import { feedbackTokens, observationTokens, type FeedbackTokens } from './conversation-tokens.js';
import type { ChatMessage, ModelTokenizer } from './model-tokenizer.js';

/** Renders the feedback block that follows a turn: whether it succeeded, and whether its output ended with EOS. */
export type FeedbackRenderer = (success: boolean, outputHadEos: boolean) => FeedbackTokens;

/** There are four possible feedback blocks per tokenizer: each is rendered once, as AReaL-lite does. */
export function feedbackRenderer(tokenizer: ModelTokenizer): FeedbackRenderer {
  const rendered = new Map<string, FeedbackTokens>();
  return (success, outputHadEos) => {
    const key = `${success}/${outputHadEos}`;
    let feedback = rendered.get(key);
    if (!feedback) {
      feedback = feedbackTokens(tokenizer, success, outputHadEos);
      rendered.set(key, feedback);
    }
    return feedback;
  };
}

/** Renders an environment's observation messages after a turn's output (conversation-tokens.ts, observationTokens). */
export type ObservationRenderer = (messages: readonly ChatMessage[], outputHadEos: boolean) => FeedbackTokens;

/** Renders each distinct block once while it is among the last 1,024 (the seed's four feedback blocks always are). */
export function observationRenderer(tokenizer: ModelTokenizer): ObservationRenderer {
  const rendered = new Map<string, FeedbackTokens>();
  return (messages, outputHadEos) => {
    const key = JSON.stringify([outputHadEos, messages.map((m) => [m.role, m.content])]);
    let block = rendered.get(key);
    if (block) {
      rendered.delete(key);
    } else {
      block = observationTokens(tokenizer, messages, outputHadEos);
      if (rendered.size >= 1024) rendered.delete(rendered.keys().next().value!);
    }
    rendered.set(key, block);
    return block;
  };
}

import { feedbackTokens, type FeedbackTokens } from './conversation-tokens.js';
import type { ModelTokenizer } from './model-tokenizer.js';

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

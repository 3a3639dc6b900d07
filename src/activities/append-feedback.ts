import type pg from 'pg';
import { feedbackTokens, type FeedbackTokens } from '../tokens/conversation-tokens.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { saveFeedback } from '../store/turn-store.js';
import { classified } from './failures.js';

export interface AppendFeedbackInput {
  trajectoryId: string;
  turn: number;
  success: boolean;
  outputHadEos: boolean;
}

/** Stores the feedback tokens that follow a turn's output (release 2's separate step; later, the environment step). */
export function appendFeedbackActivity(pool: pg.Pool, tokenizer: ModelTokenizer) {
  const feedbackFor = feedbackRenderer(tokenizer);
  return async function appendFeedback(input: AppendFeedbackInput): Promise<{ feedbackLen: number }> {
    return classified(async () => {
      const feedback = feedbackFor(input.success, input.outputHadEos);
      await saveFeedback(pool, input.trajectoryId, input.turn, feedback.ids, feedback.text);
      return { feedbackLen: feedback.ids.length };
    });
  };
}

/** There are four possible feedback blocks per tokenizer: each is rendered once, as AReaL-lite does. */
export function feedbackRenderer(tokenizer: ModelTokenizer): (success: boolean, outputHadEos: boolean) => FeedbackTokens {
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

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

/** Stores the feedback tokens that follow a turn's output and returns how many there are. */
export function appendFeedbackActivity(pool: pg.Pool, tokenizer: ModelTokenizer) {
  // Four possible feedback blocks per tokenizer: render each once, as AReaL-lite does.
  const rendered = new Map<string, FeedbackTokens>();
  return async function appendFeedback(input: AppendFeedbackInput): Promise<{ feedbackLen: number }> {
    return classified(async () => {
      const key = `${input.success}/${input.outputHadEos}`;
      let feedback = rendered.get(key);
      if (!feedback) {
        feedback = feedbackTokens(tokenizer, input.success, input.outputHadEos);
        rendered.set(key, feedback);
      }
      await saveFeedback(pool, input.trajectoryId, input.turn, feedback.ids, feedback.text);
      return { feedbackLen: feedback.ids.length };
    });
  };
}

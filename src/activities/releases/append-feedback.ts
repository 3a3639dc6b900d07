import type pg from 'pg';
import { feedbackRenderer } from '../../tokens/feedback-renderer.js';
import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import { saveFeedback } from '../../store/write/turn-store.js';
import { classified } from '../failures.js';

export interface AppendFeedbackInput {
  trajectoryId: string;
  turn: number;
  success: boolean;
  outputHadEos: boolean;
}

/**
 * Stores the feedback tokens that follow a turn's output: release 2's separate step, called only by runs of
 * releases 1-2 (`releaseTwoTrajectory`); later releases store feedback in the environment step. Drop list:
 * src/workflows/releases/drop-list.ts.
 */
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

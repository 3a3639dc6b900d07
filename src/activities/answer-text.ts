import type pg from 'pg';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { loadTurnOutputIds, NoStoredPrompt } from '../store/write/turn-store.js';
import { loadStoredOutcome } from '../store/write/stored-outcome.js';
import { classified, storedAsFailed } from './failures.js';

/**
 * A turn's decoded output, for an environment served on its own task queue (its worker reads no Postgres). Run
 * again after the trajectory was stored, it answers from the stored turn text.
 */
export function answerTextActivity(pool: pg.Pool, tokenizer: ModelTokenizer) {
  return async function answerText(input: { trajectoryId: string; turn: number }): Promise<{ text: string }> {
    return classified(async () => {
      const ids = await loadTurnOutputIds(pool, input.trajectoryId, input.turn).catch((error: unknown) => {
        if (error instanceof NoStoredPrompt || (error as Error).name === 'ContextMismatch') return undefined;
        throw error;
      });
      if (ids) return { text: tokenizer.decodeText(ids) };
      const stored = await loadStoredOutcome(pool, input.trajectoryId, input.turn);
      if (stored?.status !== 'completed' || !stored.turn) throw storedAsFailed(input.trajectoryId, `read turn ${input.turn}`);
      return { text: stored.turn.answerText };
    });
  };
}

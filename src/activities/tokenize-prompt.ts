import type pg from 'pg';
import { promptIds } from '../tokens/conversation-tokens.js';
import { codePromptIds } from '../tokens/code-prompt.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { savePrompt } from '../store/turn-store.js';
import { loadStoredOutcome } from '../store/stored-outcome.js';
import { classified, storedAsFailed } from './failures.js';

export interface TokenizePromptInput {
  trajectoryId: string;
  problem: string;
  /** A code task: rendered with the code instruction (a prompt already chat-templated is kept as it is). */
  code?: boolean;
}

/**
 * Renders the problem with the chat template and stores the prompt ids; returns P_0. Run again after the
 * trajectory was stored (its prompt row dropped), it answers with the stored prompt's length and stores nothing.
 */
export function tokenizePromptActivity(pool: pg.Pool, tokenizer: ModelTokenizer) {
  return async function tokenizePrompt(input: TokenizePromptInput): Promise<{ promptLen: number }> {
    return classified(async () => {
      const ids = input.code ? codePromptIds(tokenizer, input.problem) : promptIds(tokenizer, input.problem);
      const promptLen = await savePrompt(pool, input.trajectoryId, ids, input.problem);
      if (promptLen !== undefined) return { promptLen };
      const stored = await loadStoredOutcome(pool, input.trajectoryId);
      if (stored?.status !== 'completed') throw storedAsFailed(input.trajectoryId, 'tokenize its prompt');
      return { promptLen: stored.promptLen };
    });
  };
}

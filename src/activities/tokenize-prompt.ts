import type pg from 'pg';
import { promptIds } from '../tokens/conversation-tokens.js';
import { codePromptIds } from '../tokens/code-prompt.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { savePrompt } from '../store/turn-store.js';
import { classified } from './failures.js';

export interface TokenizePromptInput {
  trajectoryId: string;
  problem: string;
  /** A code task: rendered with the code instruction (a prompt already chat-templated is kept as it is). */
  code?: boolean;
}

/** Renders the problem with the chat template and stores the prompt ids; returns P_0. */
export function tokenizePromptActivity(pool: pg.Pool, tokenizer: ModelTokenizer) {
  return async function tokenizePrompt(input: TokenizePromptInput): Promise<{ promptLen: number }> {
    return classified(async () => {
      const ids = input.code ? codePromptIds(tokenizer, input.problem) : promptIds(tokenizer, input.problem);
      return { promptLen: await savePrompt(pool, input.trajectoryId, ids, input.problem) };
    });
  };
}

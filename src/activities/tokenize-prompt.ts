import type pg from 'pg';
import type { EnvironmentBounds } from '../environments/bounds.js';
import { unknownEnvironment, type EnvironmentSet } from '../environments/environment-set.js';
import type { JsonValue } from '../environments/environment.js';
import { checkStart } from '../environments/step-result.js';
import { promptIds, startIds } from '../tokens/conversation-tokens.js';
import { codePromptIds } from '../tokens/code-prompt.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { savePrompt } from '../store/write/turn-store.js';
import { loadStoredOutcome } from '../store/write/stored-outcome.js';
import { boundedEnvironmentCall } from './environment-call.js';
import { environmentTask, type EnvironmentTaskInput } from './environment-task.js';
import { classified, storedAsFailed } from './failures.js';

export interface TokenizePromptInput extends Partial<Omit<EnvironmentTaskInput, 'trajectoryId' | 'problem' | 'code'>> {
  trajectoryId: string;
  problem: string;
  /** A code task: rendered with the code instruction (a prompt already chat-templated is kept as it is). Releases 3–4. */
  code?: boolean | EnvironmentTaskInput['code'];
  /** Release 5: the environment whose reset gives the first messages. */
  environment?: string;
  /** Release 5: the episode's start as its own worker gave it (an environment served on its own task queue). */
  started?: unknown;
  /** Release 6: the attempts and deadline the environment's reset runs under (absent: unbounded, as release 5 ran it). */
  bounds?: EnvironmentBounds;
}

export interface TokenizedPrompt {
  promptLen: number;
  /** What the environment's first step starts from (release 5; absent when it keeps none). */
  state?: JsonValue;
}

/**
 * Starts the episode: the environment's first messages rendered with the chat template, their ids stored; returns
 * P_0. Run again after the trajectory was stored (its prompt row dropped), it answers with the stored prompt's
 * length and stores nothing. A reset is a function of the task, so a re-run renders the same prompt and state.
 */
export function tokenizePromptActivity(pool: pg.Pool, tokenizer: ModelTokenizer, environments: EnvironmentSet) {
  return async function tokenizePrompt(input: TokenizePromptInput): Promise<TokenizedPrompt> {
    return classified(async () => {
      const { ids, state } = await firstTokens(input);
      const promptLen = await savePrompt(pool, input.trajectoryId, ids, input.problem);
      const kept = state === undefined ? {} : { state };
      if (promptLen !== undefined) return { promptLen, ...kept };
      const stored = await loadStoredOutcome(pool, input.trajectoryId);
      if (stored?.status !== 'completed') throw storedAsFailed(input.trajectoryId, 'tokenize its prompt');
      return { promptLen: stored.promptLen, ...kept };
    });
  };

  async function firstTokens(input: TokenizePromptInput): Promise<{ ids: number[]; state?: JsonValue }> {
    // Releases 3–4 named no environment: the math prompt, or the code prompt for a code task.
    if (input.environment === undefined && input.started === undefined) {
      return { ids: input.code ? codePromptIds(tokenizer, input.problem) : promptIds(tokenizer, input.problem) };
    }
    const start = input.started !== undefined ? checkStart(input.started, 'reset') : await localReset(input);
    return { ids: startIds(tokenizer, start), ...(start.state === undefined ? {} : { state: start.state }) };
  }

  async function localReset(input: TokenizePromptInput) {
    const name = input.environment!;
    const environment = environments.get(name);
    if (!environment) throw unknownEnvironment(name, environments);
    const { code, bounds, ...task } = input;
    const episode = environmentTask({ ...task, ...(typeof code === 'object' ? { code } : {}), gold: input.gold ?? [] });
    return checkStart(await boundedEnvironmentCall(`${name} reset`, bounds, () => environment.reset(episode)), `${name} reset`);
  }
}

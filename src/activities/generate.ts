import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { SglangClient } from '../policy/sglang-client.js';
import { loadContext, saveTurnOutput } from '../store/turn-store.js';
import type { FinishReason } from '../trajectory/turn.js';
import { classified, FailureType } from './failures.js';

export interface GenerateInput {
  trajectoryId: string;
  turn: number;
  /** P_t as the workflow counted it; the stored context must have exactly this length. */
  contextLen: number;
  maxNewTokens: number;
  temperature: number;
}

export interface GenerateResult {
  outputLen: number;
  finishReason: FinishReason;
  versionStart: number;
  versionEnd: number;
}

/**
 * One turn of generation on the GPU queue. The context is read from Postgres and the output written back
 * there, so the tokens never pass through workflow history; the workflow gets counts.
 */
export function generateActivity(pool: pg.Pool, policy: SglangClient) {
  return async function generate(input: GenerateInput): Promise<GenerateResult> {
    const context = Context.current();
    const heartbeats = setInterval(() => context.heartbeat({ turn: input.turn }), heartbeatEvery(context));
    try {
      return await classified(async () => {
        const inputIds = await loadContext(pool, input.trajectoryId, input.turn);
        if (inputIds.length !== input.contextLen) {
          throw ApplicationFailure.nonRetryable(`trajectory ${input.trajectoryId} turn ${input.turn}: stored context has ${inputIds.length} tokens, workflow expects ${input.contextLen}`, FailureType.ContextMismatch);
        }
        const generation = await policy.generate({ inputIds, maxNewTokens: input.maxNewTokens, temperature: input.temperature, signal: context.cancellationSignal });
        if (generation.finishReason === 'abort') {
          throw ApplicationFailure.retryable(`generation of ${input.trajectoryId} turn ${input.turn} was aborted by the server`, FailureType.PolicyUnavailable);
        }
        const result = { outputLen: generation.outputIds.length, finishReason: generation.finishReason, versionStart: generation.weightVersion, versionEnd: generation.weightVersion };
        await saveTurnOutput(pool, { trajectoryId: input.trajectoryId, turn: input.turn, attempt: context.info.attempt, contextLen: inputIds.length, outputIds: generation.outputIds, outputLogprobs: generation.logprobs, ...result });
        return result;
      });
    } finally {
      clearInterval(heartbeats);
    }
  };
}

/** A third of the heartbeat timeout, so one lost heartbeat never times the attempt out. */
function heartbeatEvery(context: Context): number {
  const timeout = context.info.heartbeatTimeoutMs;
  return timeout ? Math.max(100, Math.floor(timeout / 3)) : 5_000;
}

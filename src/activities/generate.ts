import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { generateResumable, type PartialOutput } from '../policy/resumable-generation.js';
import { loadContext, saveTurnOutput } from '../store/turn-store.js';
import type { FinishReason } from '../trajectory/turn.js';
import { decodePartialOutput, encodePartialOutput } from './partial-output.js';
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
  /** The context window left no room for another turn: nothing was generated. */
  contextExhausted?: boolean;
  /** Tokens carried over from a dead attempt's last heartbeat instead of being generated again. */
  resumedTokens?: number;
}

/**
 * One turn of generation on the GPU queue. The context is read from Postgres and the output written back
 * there, so the tokens never pass through workflow history; the workflow gets counts. Heartbeats carry the
 * partial output, so a retry after a crash continues from the last heartbeat instead of starting over.
 */
export function generateActivity(pool: pg.Pool, backend: InferenceBackend, currentVersion: () => number, heartbeatIntervalMs: number) {
  return async function generate(input: GenerateInput): Promise<GenerateResult> {
    const context = Context.current();
    const resumed = decodePartialOutput(context.info.heartbeatDetails);
    // Re-announce what we carry at once: a crash before the next heartbeat must not lose it.
    context.heartbeat(encodePartialOutput(resumed));
    return classified(async () => {
      const inputIds = await loadContext(pool, input.trajectoryId, input.turn);
      if (inputIds.length !== input.contextLen) {
        throw ApplicationFailure.nonRetryable(`trajectory ${input.trajectoryId} turn ${input.turn}: stored context has ${inputIds.length} tokens, workflow expects ${input.contextLen}`, FailureType.ContextMismatch);
      }
      const budget = Math.min(input.maxNewTokens, (await backend.contextWindow()) - inputIds.length);
      const version = currentVersion();
      if (budget <= 0 && resumed.ids.length === 0) {
        return { outputLen: 0, finishReason: 'length', versionStart: version, versionEnd: version, contextExhausted: true };
      }
      const { output, finishReason } = await generateResumable(backend, {
        context: inputIds, maxNewTokens: budget, temperature: input.temperature,
        requestId: `${input.trajectoryId}/${input.turn}/${context.info.attempt}`, signal: context.cancellationSignal,
      }, resumed, currentVersion, throttledHeartbeat(context, heartbeatIntervalMs));
      const result = {
        outputLen: output.ids.length, finishReason,
        versionStart: output.versions[0] ?? version, versionEnd: output.versions[output.versions.length - 1] ?? version,
        resumedTokens: resumed.ids.length,
      };
      await saveTurnOutput(pool, {
        trajectoryId: input.trajectoryId, turn: input.turn, attempt: context.info.attempt, contextLen: inputIds.length,
        outputIds: output.ids, outputLogprobs: output.logprobs, outputVersions: output.versions, ...result,
      });
      return result;
    });
  };
}

/**
 * Heartbeats on progress only, every interval (or third of the heartbeat timeout, if shorter): a server that
 * stops producing tokens lets the attempt time out and retry, and encoding stays off the per-chunk path.
 */
function throttledHeartbeat(context: Context, intervalMs: number): (output: PartialOutput) => void {
  const every = Math.max(50, Math.min(intervalMs, Math.floor((context.info.heartbeatTimeoutMs ?? 30_000) / 3)));
  let last = Date.now();
  return (output) => {
    const now = Date.now();
    if (now - last < every) return;
    // Keep the schedule's phase, so the gap between two heartbeats never exceeds one interval plus one chunk.
    last = now - ((now - last) % every);
    context.heartbeat(encodePartialOutput(output));
  };
}

import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type pg from 'pg';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { describeSampling, unfaithfulLogprobs } from '../policy/faithful-logprobs.js';
import { UNPROBED } from '../policy/logprob-probe.js';
import type { ServedLogprobs } from '../policy/logprob-verdict.js';
import { RawLogprobsServer } from '../policy/raw-logprobs-server.js';
import { generateResumable, type PartialOutput, type ServedVersion } from '../policy/resumable-generation.js';
import { CheckpointSuperseded, dropTurnCheckpoint, type TurnCheckpointKey } from '../store/write/turn-checkpoints.js';
import { loadContext, loadStoredGeneration, NoStoredPrompt, saveTurnOutput } from '../store/write/turn-store.js';
import { loadStoredOutcome } from '../store/write/stored-outcome.js';
import { FailureType } from '../trajectory/failure.js';
import { needsProcessedLogprobs, samplingOf, type SamplingParameters } from '../trajectory/sampling.js';
import type { FinishReason } from '../trajectory/turn.js';
import { processMetrics } from '../metrics/process-metrics.js';
import { checkpointHeartbeat } from './partial-output.js';
import { classified, storedAsFailed } from './failures.js';
import { resumeTurn, TurnCheckpointWriter } from './turn-checkpoint.js';

export interface GenerateInput {
  trajectoryId: string;
  turn: number;
  /** P_t as the workflow counted it; the stored context must have exactly this length. */
  contextLen: number;
  maxNewTokens: number;
  /** Kept for GPU workers of earlier releases, which read only this; `sampling` holds it too. */
  temperature?: number;
  /** Absent in histories recorded before it existed: then `temperature` with the seed's other parameters. */
  sampling?: SamplingParameters;
  /**
   * Added to Temporal's attempt number (release 5): a turn that falls back from its server's own task queue to the
   * shared one is a new activity whose attempts restart at 1, yet must count as newer than every attempt before it,
   * so that it claims (and resumes from) their checkpoint and fences them off.
   */
  attemptBase?: number;
  /**
   * Release 6: another turn of this trajectory may follow, on this server's own queue (false on its last allowed
   * turn), so a server need keep nothing for it once this one ends. Absent from earlier releases (unknown) and from
   * runs without turn affinity (the next turn may start anywhere: nothing to keep).
   */
  moreTurns?: boolean;
}

export interface GenerateResult {
  outputLen: number;
  finishReason: FinishReason;
  versionStart: number;
  versionEnd: number;
  /** The context window left no room for another turn: nothing was generated. */
  contextExhausted?: boolean;
  /** Tokens carried over from a dead attempt's checkpoint instead of being generated again. */
  resumedTokens?: number;
  /** The task queue of the worker that answered: its server holds this trajectory's prefix now (release 5). */
  affinityQueue?: string;
}

/**
 * One turn of generation on the GPU queue. The context is read from Postgres and the output written back
 * there, so the tokens never pass through workflow history; the workflow gets counts. The partial output is
 * checkpointed to Postgres as it grows and the heartbeat carries only a cursor, so a retry after a crash
 * continues from the last checkpoint instead of starting over, and no heartbeat grows with the turn.
 */
export function generateActivity(
  pool: pg.Pool,
  backend: InferenceBackend,
  currentVersion: ServedVersion,
  heartbeatIntervalMs: number,
  servedLogprobs: () => Promise<ServedLogprobs> = () => Promise.resolve(UNPROBED),
  affinityQueue?: string,
) {
  // What the turn's row names as its server (the run page's "on the previous server" compares them).
  const deps = { pool, backend, currentVersion, heartbeatIntervalMs, servedLogprobs, servedBy: affinityQueue ?? backend.url };
  const answeredHere = affinityQueue === undefined ? {} : { affinityQueue };
  return async function generate(input: GenerateInput): Promise<GenerateResult> {
    const context = Context.current();
    // Queue wait (migration 018): Temporal scheduled this attempt, and this worker starts it now. Unknown without a
    // real schedule time (one after 2001: a test's mock environment gives 1 ms after the epoch).
    const scheduled = context.info.currentAttemptScheduledTimestampMs;
    const queueMs = scheduled > 1e12 ? Date.now() - scheduled : undefined;
    const key = { trajectoryId: input.trajectoryId, turn: input.turn, attempt: (input.attemptBase ?? 0) + context.info.attempt };
    return classified(async () => {
      try {
        return { ...(await generateTurn(deps, input, context, key, queueMs)), ...answeredHere };
      } catch (error) {
        // No prompt to read or no checkpoint to claim: the trajectory may have been stored meanwhile (this attempt
        // is stale: its worker stalled), and then the stored turn is the answer (src/workflows/RE-RUNS.md).
        if (!(error instanceof NoStoredPrompt || isSuperseded(error))) throw error;
        const stored = await storedGeneration(pool, input);
        if (!stored) throw error;
        return { ...stored, ...answeredHere };
      }
    });
  };
}

interface GenerateDeps {
  pool: pg.Pool;
  backend: InferenceBackend;
  currentVersion: ServedVersion;
  heartbeatIntervalMs: number;
  /** What the server's logprobs are of, as the worker's start-up probe finds: awaited only when the sampling needs it. */
  servedLogprobs: () => Promise<ServedLogprobs>;
  /** The server stored with each turn this worker generates: its own task queue, or its backend URL. */
  servedBy: string;
}

async function generateTurn(
  deps: GenerateDeps,
  input: GenerateInput,
  context: Context,
  key: TurnCheckpointKey,
  queueMs: number | undefined,
): Promise<GenerateResult> {
  const { pool, backend, currentVersion, heartbeatIntervalMs } = deps;
  const sampling = input.sampling ?? samplingOf({ temperature: input.temperature });
  // Refused before anything is claimed or generated: tokens stored with the wrong logprobs are worse than none.
  if (needsProcessedLogprobs(sampling)) {
    const unfaithful = unfaithfulLogprobs(sampling, await deps.servedLogprobs(), backend.kind);
    if (unfaithful) throw new RawLogprobsServer(backend.url, describeSampling(sampling), unfaithful);
  }
  const { resumed, claimed } = await superseded(resumeTurn(pool, key, context.info.heartbeatDetails));
  if (claimed) {
    // The attempt before may have stored the whole turn (and dropped its checkpoint) and died before Temporal
    // heard it finish: the turn is done, and generating it again would redo what that attempt checkpointed.
    const stored = await loadStoredGeneration(pool, input.trajectoryId, input.turn);
    if (stored && stored.contextLen === input.contextLen) {
      await dropTurnCheckpoint(pool, key);
      processMetrics.checkpointResumes.inc();
      return {
        outputLen: stored.outputLen,
        finishReason: stored.finishReason,
        versionStart: stored.versionStart,
        versionEnd: stored.versionEnd,
        resumedTokens: stored.outputLen,
      };
    }
  }
  // A retry announces its cursor at once: it replaces the last attempt's (or an earlier release's tokens). A first
  // attempt has nothing to replace; its first heartbeat follows its first checkpoint, so a turn shorter than
  // one heartbeat interval costs the server no heartbeat at all.
  if (claimed) heartbeat(context, key.attempt, resumed.ids.length);
  if (resumed.ids.length > 0) processMetrics.checkpointResumes.inc();
  const inputIds = await loadContext(pool, input.trajectoryId, input.turn);
  if (inputIds.length !== input.contextLen) {
    throw ApplicationFailure.nonRetryable(
      `trajectory ${input.trajectoryId} turn ${input.turn}: stored context has ${inputIds.length} tokens, workflow expects ${input.contextLen}`,
      FailureType.ContextMismatch,
    );
  }
  const budget = Math.min(input.maxNewTokens, (await backend.contextWindow()) - inputIds.length);
  const version = await currentVersion();
  if (budget <= 0 && resumed.ids.length === 0) {
    if (claimed) await dropTurnCheckpoint(pool, key);
    return { outputLen: 0, finishReason: 'length', versionStart: version, versionEnd: version, contextExhausted: true };
  }
  const checkpoint = new TurnCheckpointWriter(
    pool,
    key,
    resumed.ids.length,
    (tokens) => heartbeat(context, key.attempt, tokens),
    context.cancellationSignal,
  );
  const generationStarted = performance.now();
  const { output, finishReason, cachedTokens } = await superseded(
    generateResumable(
      backend,
      {
        context: inputIds,
        maxNewTokens: budget,
        sampling,
        requestId: `${input.trajectoryId}/${input.turn}/${key.attempt}`,
        // The activity's cancellation or a lost checkpoint, whichever comes first.
        signal: checkpoint.signal,
      },
      resumed,
      currentVersion,
      counted(
        resumed.ids.length,
        onSchedule(context, heartbeatIntervalMs, (partial) => checkpoint.offer(partial)),
      ),
    ).catch(async (error: unknown) => {
      // No checkpoint write (nor its heartbeat) may outlive the attempt; one that stopped it is the reason.
      await checkpoint.settle().catch(() => undefined);
      throw checkpoint.stopped ?? error;
    }),
  );
  const generateMs = performance.now() - generationStarted;
  // A write still in flight must land (or tell us we were superseded) before the output replaces it.
  await superseded(checkpoint.settle());
  const result = {
    outputLen: output.ids.length,
    finishReason,
    versionStart: output.versions[0] ?? version,
    versionEnd: output.versions[output.versions.length - 1] ?? version,
    resumedTokens: resumed.ids.length,
  };
  await saveTurnOutput(pool, {
    trajectoryId: input.trajectoryId,
    turn: input.turn,
    attempt: key.attempt,
    contextLen: inputIds.length,
    outputIds: output.ids,
    outputLogprobs: output.logprobs,
    outputVersions: output.versions,
    ...result,
    servedBy: deps.servedBy,
    ...(cachedTokens === undefined ? {} : { cachedTokens }),
    ...(queueMs === undefined ? {} : { queueMs }),
    generateMs,
  });
  if (claimed || checkpoint.writes > 0) await dropTurnCheckpoint(pool, key);
  return result;
}

/** The turn as its stored trajectory has it; undefined while the trajectory has no row. */
async function storedGeneration(pool: pg.Pool, input: GenerateInput): Promise<GenerateResult | undefined> {
  const stored = await loadStoredOutcome(pool, input.trajectoryId, input.turn);
  if (!stored) return undefined;
  if (stored.status === 'failed') throw storedAsFailed(input.trajectoryId, `generate turn ${input.turn}`);
  if (stored.turn?.contextLen !== input.contextLen) {
    throw ApplicationFailure.nonRetryable(
      `trajectory ${input.trajectoryId} is stored without a turn ${input.turn} of context ${input.contextLen}`,
      FailureType.ContextMismatch,
    );
  }
  const { outputLen, noEos, versionStart, versionEnd } = stored.turn;
  return { outputLen, finishReason: noEos ? 'length' : 'stop', versionStart, versionEnd, resumedTokens: outputLen };
}

function heartbeat(context: Context, attempt: number, tokens: number): void {
  context.heartbeat(checkpointHeartbeat({ attempt, tokens }));
  processMetrics.heartbeats.inc();
}

/**
 * A newer attempt owns the turn: this one timed out but kept running. Retryable, because the only other way to
 * lose the checkpoint is the trajectory ending, where the retry is never scheduled.
 */
async function superseded<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof CheckpointSuperseded) throw ApplicationFailure.retryable(error.message, FailureType.WorkerLost);
    throw error;
  }
}

/** The failure `superseded` turns a lost checkpoint into. */
function isSuperseded(error: unknown): boolean {
  return error instanceof ApplicationFailure && error.type === FailureType.WorkerLost;
}

/** Counts the tokens streamed to this attempt; the resumed ones were counted by the attempt that received them. */
function counted(start: number, next: (output: PartialOutput) => void): (output: PartialOutput) => void {
  let seen = start;
  return (output) => {
    processMetrics.tokensReceived.inc(output.ids.length - seen);
    seen = output.ids.length;
    next(output);
  };
}

/**
 * Checkpoints on progress only, every interval (or third of the heartbeat timeout, if shorter): a server that
 * stops producing tokens lets the attempt time out and retry, and the write stays off the per-chunk path.
 */
function onSchedule(context: Context, intervalMs: number, checkpoint: (output: PartialOutput) => void): (output: PartialOutput) => void {
  const every = Math.max(50, Math.min(intervalMs, Math.floor((context.info.heartbeatTimeoutMs ?? 30_000) / 3)));
  let last = Date.now();
  return (output) => {
    const now = Date.now();
    if (now - last < every) return;
    // Keep the schedule's phase, so the gap between two checkpoints never exceeds one interval plus one chunk.
    last = now - ((now - last) % every);
    checkpoint(output);
  };
}

import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { loadStoredTurns } from '../store/write/turn-store.js';
import { storeCompletedTrajectory, storeFailedTrajectory } from '../store/write/trajectory-store.js';
import type { TrajectoryIdentity } from '../trajectory/identity.js';
import { packTrajectory } from '../trajectory/packing.js';
import type { PackingLayout } from '../trajectory/options.js';
import type { SamplingParameters } from '../trajectory/sampling.js';
import { stoppedWithoutEos, type EndReason, type TurnRecord } from '../trajectory/turn.js';
import { failureOf, type FailureClass } from '../trajectory/failure.js';
import { storableText } from '../store/storable-text.js';
import { classified, FailureType, storedAsFailed } from './failures.js';
import { loadStoredOutcome } from '../store/write/stored-outcome.js';
import { parseMembership, type GroupMembership } from '../admission/group-membership.js';

export interface PersistInput extends TrajectoryIdentity {
  layout: PackingLayout;
  /** Absent in histories recorded before it existed: those ran every turn or stopped early. */
  endReason?: EndReason;
  turns: TurnRecord[];
  rewards: number[];
  rawRewards: number[];
  /** The sampling every turn was generated with. Absent in histories recorded before it existed: stored as unknown. */
  sampling?: SamplingParameters;
}

/**
 * Packs the stored turns and writes the trajectory exactly once (idempotent by trajectory id). Run again after it
 * was stored (its working rows are gone then), it answers as it did: stored. A trajectory stored as failed, or with
 * no row and no working rows, is never reported stored: the workflow then fails, as its row says.
 */
export function persistTrajectoryActivity(pool: pg.Pool) {
  return async function persistTrajectory(input: PersistInput): Promise<{ stored: boolean }> {
    return classified(async () => {
      const { promptIds, turns: stored } = await loadStoredTurns(pool, input.trajectoryId);
      if (stored.length === 0 && promptIds.length === 0) return alreadyStored(pool, input.trajectoryId);
      const mismatch = input.turns.find((turn, t) => stored[t]?.contextLen !== turn.contextLen || stored[t]?.outputIds.length !== turn.outputLen);
      if (stored.length !== input.turns.length || mismatch) {
        throw ApplicationFailure.nonRetryable(
          `trajectory ${input.trajectoryId}: stored turns disagree with the workflow's record (turn ${mismatch?.turn ?? stored.length})`,
          FailureType.MalformedTrajectory,
        );
      }
      const packed = packTrajectory(
        promptIds,
        stored.map((turn, t) => ({
          outputIds: turn.outputIds,
          outputLogprobs: turn.outputLogprobs,
          outputVersions: turn.outputVersions,
          feedbackIds: turn.feedbackIds,
          ...(turn.forkIds ? { forkIds: turn.forkIds } : {}),
          noEos: stoppedWithoutEos(input.turns[t]!.finishReason),
        })),
        input.layout,
      );
      const endReason = input.endReason ?? 'turns';
      if (await storeCompletedTrajectory(pool, { ...input, endReason, promptIds, packed, texts: stored })) return { stored: true };
      return alreadyStored(pool, input.trajectoryId);
    });
  };
}

/** The answer of a persist that finds the trajectory's row written by an earlier run: completed, or not at all. */
async function alreadyStored(pool: pg.Pool, trajectoryId: string): Promise<{ stored: boolean }> {
  const outcome = await loadStoredOutcome(pool, trajectoryId);
  if (outcome?.status === 'completed') return { stored: false };
  if (outcome?.status === 'failed') throw storedAsFailed(trajectoryId, 'persist');
  throw ApplicationFailure.nonRetryable(
    `trajectory ${trajectoryId} has neither working rows nor a stored row: nothing to persist`,
    FailureType.MalformedTrajectory,
  );
}

export interface PersistFailureInput extends TrajectoryIdentity {
  turnsDone: number;
  error: string;
  /** Absent in histories recorded before failure types: then derived from `error` (InternalError if unclear). */
  failureType?: string;
  failureClass?: FailureClass;
  /**
   * The request's group, when the trajectory failed before it could join it (its request was invalid elsewhere):
   * it is counted there as a failed member, so the group fills and its siblings run instead of waiting for good.
   */
  unjoinedGroup?: unknown;
}

/**
 * What recording a failure found: `existing` is the row an earlier run (or another path) stored first. A workflow
 * whose failure finds a completed row ends completed, as the row says (release 4).
 */
export interface PersistFailureResult {
  stored: boolean;
  existing?: 'completed' | 'failed';
  /** The stored failure's type and class, when `existing` is failed: the workflow fails as the row says. */
  failureType?: string;
  failureClass?: FailureClass;
}

/** Stores a failed trajectory with its type and class, and the texts of the turns it finished. */
export function persistFailureActivity(pool: pg.Pool) {
  return async function persistFailure(input: PersistFailureInput): Promise<PersistFailureResult> {
    return classified(async () => {
      // An id Postgres cannot hold has no stored turns; looking it up as written would fail the lookup.
      const { turns } = await loadStoredTurns(pool, storableText(input.trajectoryId));
      const failure = { turnsDone: input.turnsDone, message: input.error, ...failureOf(input.error, input) };
      if (await storeFailedTrajectory(pool, input, failure, turns, memberGroup(input.trajectoryId, input.unjoinedGroup))) return { stored: true };
      const existing = await loadStoredOutcome(pool, input.trajectoryId);
      if (existing?.status !== 'failed') return { stored: false, ...(existing ? { existing: existing.status } : {}) };
      return {
        stored: false,
        existing: 'failed',
        ...(existing.failureType ? { failureType: existing.failureType } : {}),
        ...(existing.failureClass ? { failureClass: existing.failureClass } : {}),
      };
    });
  };
}

/** The group a failed trajectory may still take its place in: only a valid group section that names it by its id. */
function memberGroup(trajectoryId: string, group: unknown): GroupMembership | undefined {
  if (group === undefined) return undefined;
  const membership = parseMembership(trajectoryId, group);
  return 'group' in membership ? membership.group : undefined;
}

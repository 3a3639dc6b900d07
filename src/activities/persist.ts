import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { loadStoredTurns } from '../store/turn-store.js';
import { storeCompletedTrajectory, storeFailedTrajectory, type TrajectoryIdentity } from '../store/trajectory-store.js';
import { packTrajectory } from '../trajectory/packing.js';
import type { PackingLayout } from '../trajectory/options.js';
import { stoppedWithoutEos, type EndReason, type TurnRecord } from '../trajectory/turn.js';
import { failureOf, type FailureClass } from '../trajectory/failure.js';
import { storableText } from '../store/storable-text.js';
import { classified, FailureType } from './failures.js';
import { parseMembership, type GroupMembership } from '../admission/group-membership.js';

export interface PersistInput extends TrajectoryIdentity {
  layout: PackingLayout;
  /** Absent in histories recorded before it existed: those ran every turn or stopped early. */
  endReason?: EndReason;
  turns: TurnRecord[];
  rewards: number[];
  rawRewards: number[];
}

/** Packs the stored turns and writes the trajectory exactly once (idempotent by trajectory id). */
export function persistTrajectoryActivity(pool: pg.Pool) {
  return async function persistTrajectory(input: PersistInput): Promise<{ stored: boolean }> {
    return classified(async () => {
      const { promptIds, turns: stored } = await loadStoredTurns(pool, input.trajectoryId);
      if (stored.length === 0 && promptIds.length === 0) return { stored: false }; // persisted by an earlier attempt
      const mismatch = input.turns.find((turn, t) => stored[t]?.contextLen !== turn.contextLen || stored[t]?.outputIds.length !== turn.outputLen);
      if (stored.length !== input.turns.length || mismatch) {
        throw ApplicationFailure.nonRetryable(`trajectory ${input.trajectoryId}: stored turns disagree with the workflow's record (turn ${mismatch?.turn ?? stored.length})`, FailureType.MalformedTrajectory);
      }
      const packed = packTrajectory(promptIds, stored.map((turn, t) => ({
        outputIds: turn.outputIds, outputLogprobs: turn.outputLogprobs, outputVersions: turn.outputVersions, feedbackIds: turn.feedbackIds, noEos: stoppedWithoutEos(input.turns[t]!.finishReason),
      })), input.layout);
      const endReason = input.endReason ?? 'turns';
      return { stored: await storeCompletedTrajectory(pool, { ...input, endReason, promptIds, packed, texts: stored }) };
    });
  };
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

/** Stores a failed trajectory with its type and class, and the texts of the turns it finished. */
export function persistFailureActivity(pool: pg.Pool) {
  return async function persistFailure(input: PersistFailureInput): Promise<{ stored: boolean }> {
    return classified(async () => {
      // An id Postgres cannot hold has no stored turns; looking it up as written would fail the lookup.
      const { turns } = await loadStoredTurns(pool, storableText(input.trajectoryId));
      const failure = { turnsDone: input.turnsDone, message: input.error, ...failureOf(input.error, input) };
      return { stored: await storeFailedTrajectory(pool, input, failure, turns, memberGroup(input.trajectoryId, input.unjoinedGroup)) };
    });
  };
}

/** The group a failed trajectory may still take its place in: only a valid group section that names it by its id. */
function memberGroup(trajectoryId: string, group: unknown): GroupMembership | undefined {
  if (group === undefined) return undefined;
  const membership = parseMembership(trajectoryId, group);
  return 'group' in membership ? membership.group : undefined;
}

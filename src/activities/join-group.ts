import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { joinGroup } from '../store/write/rollout-groups.js';
import { parseMembership, type GroupStatus } from '../admission/group-membership.js';
import { classified, FailureType } from './failures.js';

export interface JoinGroupInput {
  trajectoryId: string;
  qid: string;
  /** The request's `group`, checked here: a workflow cannot use zod, and bad input must fail once, clearly. */
  group: unknown;
}

/** Registers the trajectory in its group and reports whether the group has been admitted yet. */
export function joinGroupActivity(pool: pg.Pool) {
  return async function joinGroupForAdmission(input: JoinGroupInput): Promise<{ status: GroupStatus }> {
    return classified(async () => {
      const membership = parseMembership(input.trajectoryId, input.group);
      if ('invalid' in membership) throw ApplicationFailure.nonRetryable(membership.invalid, FailureType.InvalidGroup);
      return { status: await joinGroup(pool, input.trajectoryId, input.qid, membership.group) };
    });
  };
}

import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { joinGroup, type GroupStatus } from '../store/rollout-groups.js';
import { groupMembershipSchema } from '../admission/group-membership.js';
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
      const parsed = groupMembershipSchema.safeParse(input.group);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'group'}: ${issue.message}`).join('; ');
        throw ApplicationFailure.nonRetryable(`trajectory ${input.trajectoryId} has an invalid group: ${problems}`, FailureType.InvalidGroup);
      }
      if (input.trajectoryId !== `${parsed.data.groupId}/${parsed.data.sample}`) {
        throw ApplicationFailure.nonRetryable(`trajectory id ${input.trajectoryId} must be "<groupId>/<sample>" (${parsed.data.groupId}/${parsed.data.sample})`, FailureType.InvalidGroup);
      }
      return { status: await joinGroup(pool, input.trajectoryId, input.qid, parsed.data) };
    });
  };
}

import { describe, expect, it } from 'vitest';
import { admissionCapacity, isStale, stalenessAt } from '../../src/admission/staleness.js';
import { groupMembershipSchema, runConfigSchema } from '../../src/admission/group-membership.js';

describe('admission capacity (AReaL StalenessManager.get_capacity)', () => {
  const bound = { maxHeadOffpolicyness: 2, batchSize: 4, maxConcurrent: 6 };

  it('is limited by concurrency when the staleness budget is large', () => {
    expect(admissionCapacity(bound, { version: 10, running: 1, accepted: 0 })).toBe(5);
  });

  it('is limited by (η + version + 1) · batchSize − (accepted + running)', () => {
    // (2 + 0 + 1) · 4 = 12 groups may exist at version 0.
    expect(admissionCapacity(bound, { version: 0, running: 2, accepted: 8 })).toBe(2);
    expect(admissionCapacity(bound, { version: 0, running: 4, accepted: 8 })).toBe(0);
    // A version bump opens one more batch.
    expect(admissionCapacity(bound, { version: 1, running: 4, accepted: 8 })).toBe(2);
  });

  it('never goes negative, even past the bound', () => {
    expect(admissionCapacity(bound, { version: 0, running: 9, accepted: 20 })).toBe(0);
  });

  it('admits exactly one batch ahead in the synchronous case (η = 0)', () => {
    const sync = { maxHeadOffpolicyness: 0, batchSize: 8, maxConcurrent: 100 };
    expect(admissionCapacity(sync, { version: 3, running: 0, accepted: 24 })).toBe(8);
    expect(admissionCapacity(sync, { version: 3, running: 8, accepted: 24 })).toBe(0);
  });

  it('flags as stale only what is more than η versions old', () => {
    expect(stalenessAt(5, 3)).toBe(2);
    expect(isStale(bound, stalenessAt(5, 3))).toBe(false);
    expect(isStale(bound, stalenessAt(6, 3))).toBe(true);
    expect(stalenessAt(2, 4)).toBe(0);
  });
});

describe('group membership in a request', () => {
  const run = { runId: 'r1', maxHeadOffpolicyness: 1, batchSize: 2, maxConcurrent: 4 };

  it('accepts a well-formed group', () => {
    expect(groupMembershipSchema.safeParse({ run, groupId: 'r1/q7', size: 4, sample: 3 }).success).toBe(true);
  });

  it('rejects what would corrupt the counters, naming the field', () => {
    const problems = (group: object) => groupMembershipSchema.safeParse(group).error?.issues.map((i) => i.path.join('.'));
    expect(problems({ run, groupId: 'r1/q7', size: 4, sample: 4 })).toEqual(['sample']);
    expect(problems({ run, groupId: 'other/q7', size: 4, sample: 0 })).toEqual(['groupId']);
    expect(problems({ run: { ...run, batchSize: 0 }, groupId: 'r1/q7', size: 4, sample: 0 })).toEqual(['run.batchSize']);
    expect(problems({ run, groupId: 'r1/q7', size: 4, sample: 0, extra: true })).toEqual(['']);
    expect(runConfigSchema.safeParse({ ...run, runId: 'has space' }).success).toBe(false);
  });
});

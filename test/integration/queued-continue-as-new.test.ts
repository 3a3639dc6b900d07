import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';

let stack: TestStack;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = await startTestStack({ seed: 17 });
  stops.push(await stack.startWorkers(), await stack.startController());
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await stack?.stop();
});

describe('a trajectory queued for admission', () => {
  it('continues as new several times while it waits, then completes with exactly one result', { timeout: 120_000 }, async () => {
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    // One group at a time and no version published: one of the two waits until version 1 appears.
    const run = { runId: 'can', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
    const groups = await client.submit(run, stack.problems.slice(0, 2), {
      samples: 2,
      rollout: { turns: 2 },
      timeouts: { admissionRecheckSeconds: 0.5, admissionRecheckMaxSeconds: 1, admissionRechecksPerRun: 2 },
    });
    // The controller admits one of the two (its choice); the other's members wait, continuing as new.
    const handles = groups.map((group) => group.trajectoryIds.map((id) => stack.client.workflow.getHandle(id)));
    const runs = handles.map((members) => members.map(() => new Set<string>()));
    const { group } = await pollUntil(
      async () => {
        for (const [g, members] of handles.entries()) for (const [m, handle] of members.entries()) runs[g]![m]!.add((await handle.describe()).runId);
        return {
          group: runs.findIndex((members) => members.every((ids) => ids.size >= 4)),
          runsSeen: runs.map((members) => members.map((ids) => ids.size).join(', ')).join(' | '),
        };
      },
      { what: 'a group whose every member ran 4 times', timeoutMs: 60_000, intervalMs: 200, done: (seen) => seen.group >= 0, fatal: () => true },
    );
    const waiting = handles[group]!;
    // Still queued, still a member of its group, history of each run small.
    const { rows: members } = await stack.pool.query("SELECT count(*)::int AS n FROM rollout_members WHERE trajectory_id LIKE 'can/%'");
    expect(members[0].n).toBe(4);
    for (const handle of waiting) {
      const described = await handle.describe();
      expect(described.status.name).toBe('RUNNING');
      expect(described.historyLength).toBeLessThan(40);
    }

    await publishPolicyVersion(stack.pool, 1);
    const results = await client.wait(groups);
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const { rows } = await stack.pool.query("SELECT trajectory_id, status FROM trajectories WHERE trajectory_id LIKE 'can/%' ORDER BY trajectory_id");
    expect(rows.map((row) => row.trajectory_id)).toEqual(groups.flatMap((group) => group.trajectoryIds).sort());
    const { rows: counted } = await stack.pool.query("SELECT finished, completed FROM rollout_groups WHERE run_id = 'can' ORDER BY group_id");
    expect(counted).toEqual([
      { finished: 2, completed: 2 },
      { finished: 2, completed: 2 },
    ]);

    // Each group is handed to the trainer exactly once.
    const batch = await client.consume('can', 2, { waitMs: 10_000 });
    expect(batch?.rows.map((t) => t.trajectory_id).sort()).toEqual(rows.map((row) => row.trajectory_id));
    expect(await client.consume('can', 1, { waitMs: 500 })).toBeUndefined();
  });
});

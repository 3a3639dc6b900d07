import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { admitGroups } from '../../src/store/write/rollout-groups.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;

/** `ratchet controller` in its own process; the returned stop kills it with SIGKILL, mid-whatever. */
async function controllerProcess(): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, [path.resolve('dist/cli/main.js'), 'controller', '--poll-ms', '200'], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('admission controller running') && resolve());
    child.once('exit', (code) => reject(new Error(`ratchet controller exited with ${code}`)));
  });
  return async () => {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  };
}

beforeAll(async () => {
  stack = await startTestStack({ seed: 5 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController();
});

afterAll(async () => {
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

describe('staleness-bounded admission over a training loop', () => {
  it('never admits beyond (η + version + 1) · batchSize across 21 version bumps with worker and controller restarts', async () => {
    const run: RunConfig = { runId: 'loop', maxHeadOffpolicyness: 1, batchSize: 2, maxConcurrent: 3 };
    const steps = 21;
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    // More groups than the loop can ever consume, so admission, not supply, is what limits it.
    const epochs = [0, 1].map((epoch) => client.submit(run, stack.problems.slice(0, 24), { samples: 2, rollout: { turns: 2 }, tag: `e${epoch}` }));
    const submitted = (await Promise.all(epochs)).flat();
    expect(submitted).toHaveLength(48);

    const consumed: { step: number; groupIds: string[]; policyVersion: number }[] = [];
    for (let step = 0; step < steps; step++) {
      if (step === 4 || step === 12) {
        await stopWorkers!();
        stopWorkers = await stack.startWorkers();
      }
      // Controller restarts: in-process at 6, then a separate `ratchet controller` process from 10 that is
      // SIGKILLed at 17, wherever it is in an admission.
      if (step === 6 || step === 17) {
        await stopController!();
        stopController = await stack.startController();
      }
      if (step === 10) {
        await stopController!();
        stopController = await controllerProcess();
      }
      const batch = await client.consume(run.runId, run.batchSize, { consumer: `trainer-${step}`, waitMs: 120_000 });
      expect(batch, `batch ${step}`).toBeDefined();
      expect(batch!.groupIds).toHaveLength(run.batchSize);
      expect(batch!.policyVersion).toBe(step);
      for (const row of batch!.rows) {
        const oldest = Math.min(...row.version_start);
        expect(row.staleness).toBe(step - oldest);
        expect(row.stale).toBe(step - oldest > run.maxHeadOffpolicyness);
      }
      consumed.push({ step, groupIds: batch!.groupIds, policyVersion: batch!.policyVersion });
      await client.ack(batch!.batchId);
      await publishPolicyVersion(stack.pool, step + 1);
    }

    // Every group was handed out once.
    const all = consumed.flatMap((c) => c.groupIds);
    expect(new Set(all).size).toBe(steps * run.batchSize);

    // With the final version, admission goes on up to the bound, (η + 21 + 1) · 2 groups, and stops there.
    const admitted = async () =>
      Number((await stack.pool.query(`SELECT count(*) FROM rollout_groups WHERE run_id = $1 AND status = 'admitted'`, [run.runId])).rows[0].count);
    const finalBound = (run.maxHeadOffpolicyness + steps + 1) * run.batchSize;
    await expect.poll(admitted, { timeout: 60_000, interval: 250 }).toBe(finalBound);
    await expect.poll(async () => (await client.status(run.runId))!.running, { timeout: 60_000, interval: 250 }).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // room for a wrongful admission to show
    expect(await admitted()).toBe(finalBound);

    // The bound, as admission recorded it, and as recomputed independently from the admission order.
    const { rows } = await stack.pool.query(
      `SELECT group_id, admitted_version, admitted_accepted, admitted_running FROM rollout_groups
       WHERE run_id = $1 AND status = 'admitted' ORDER BY admitted_at, seq`,
      [run.runId],
    );
    expect(rows.length).toBeGreaterThanOrEqual(steps * run.batchSize);
    let previousVersion = 0;
    rows.forEach((row, rank) => {
      const bound = (run.maxHeadOffpolicyness + row.admitted_version + 1) * run.batchSize;
      expect(row.admitted_accepted + row.admitted_running + 1).toBeLessThanOrEqual(bound);
      expect(row.admitted_running + 1).toBeLessThanOrEqual(run.maxConcurrent);
      // No group was rejected, so the (rank+1)-th admission had rank+1 groups accepted or running.
      expect(rank + 1).toBeLessThanOrEqual(bound);
      expect(row.admitted_version).toBeGreaterThanOrEqual(previousVersion);
      previousVersion = row.admitted_version;
    });
    const status = await client.status(run.runId);
    expect(status).toMatchObject({ policyVersion: steps, rejected: 0, consumed: steps * run.batchSize, capacity: 0 });
    expect(status!.waiting).toBe(48 - rows.length);

    // Cancelling the run leaves nothing waiting and nothing running: the waiting groups and any still running are
    // cancelled (a running group used to stay admitted and end as rejected); finished groups keep their state.
    await client.cancel({ runId: run.runId });
    await expect.poll(async () => (await client.status(run.runId))!.running, { timeout: 60_000, interval: 250 }).toBe(0);
    const cancelled = (await client.status(run.runId))!;
    expect(cancelled.cancelled).toBeGreaterThanOrEqual(48 - rows.length);
    expect(cancelled.cancelled + cancelled.accepted + cancelled.rejected).toBe(48);
    expect(cancelled.waiting).toBe(0);
  });
});

describe('bad submissions', () => {
  const run: RunConfig = { runId: 'dup', maxHeadOffpolicyness: 4, batchSize: 2, maxConcurrent: 4 };

  it('turns a resubmitted group into a duplicate that starts nothing', async () => {
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const [first] = await client.submit(run, stack.problems.slice(30, 31), { samples: 2, rollout: { turns: 1 } });
    const [again] = await client.submit(run, stack.problems.slice(30, 31), { samples: 2, rollout: { turns: 1 } });
    expect(first!.duplicate).toBe(false);
    expect(again).toMatchObject({ groupId: first!.groupId, duplicate: true });
    const results = await client.wait([first!]);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(await stack.exported(`${first!.groupId}/`)).toHaveLength(2);
    expect((await client.status(run.runId))!.accepted).toBe(1);
  });

  it('refuses run settings that contradict the run: at submit, and in a workflow started directly', async () => {
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const contradicting = { ...run, maxHeadOffpolicyness: 9 };
    await expect(client.submit(contradicting, stack.problems.slice(31, 32), { samples: 1 })).rejects.toThrow(
      /run dup was created with maxHeadOffpolicyness 4, batchSize 2, maxConcurrent 4; this request says maxHeadOffpolicyness 9/,
    );
    expect(await stack.exported(`dup/${stack.problems[31]!.qid}`, { includeFailed: true })).toHaveLength(0);

    // A trainer in another language starts the workflow itself: the trajectory fails once, with the reason, and is recorded.
    const problem = stack.problems[31]!;
    const groupId = `dup/${problem.qid}`;
    const handle = await stack.client.workflow.start('trajectory', {
      taskQueue: 'ratchet-cpu',
      workflowId: `${groupId}/0`,
      args: [
        {
          trajectoryId: `${groupId}/0`,
          qid: problem.qid,
          problem: problem.problem,
          gold: problem.gold,
          group: { run: contradicting, groupId, size: 1, sample: 0 },
        },
      ],
    });
    await expect(handle.result()).rejects.toThrow(/failed/);
    const [row] = await stack.exported(`${groupId}/`, { includeFailed: true });
    expect(row!.status).toBe('failed');
    expect(row!.error).toMatch(/run dup was created with maxHeadOffpolicyness 4/);
  });

  it('fails a request whose trajectory id does not name its group and sample', async () => {
    const problem = stack.problems[32]!;
    const handle = await stack.client.workflow.start('trajectory', {
      taskQueue: 'ratchet-cpu',
      workflowId: 'dup/odd-id',
      args: [
        {
          trajectoryId: 'dup/odd-id',
          qid: problem.qid,
          problem: problem.problem,
          gold: problem.gold,
          group: { run, groupId: `dup/${problem.qid}`, size: 1, sample: 0 },
        },
      ],
    });
    await expect(handle.result()).rejects.toThrow(/failed/);
    const [row] = await stack.exported('dup/odd-id', { includeFailed: true });
    // The request schema catches it before the trajectory joins any group.
    expect(row!.error).toMatch(/trajectoryId: must be "<groupId>\/<sample>" \(dup\/sample-33\/0\)/);
    expect(row).toMatchObject({ failure_type: 'InvalidRequest', failure_class: 'data' });
  });
});

describe('a controller that dies between admitting and telling', () => {
  it('tells the admitted members when it comes back, long before their own re-check', async () => {
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const run: RunConfig = { runId: 'crash', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
    await stopController!();
    const groups = await client.submit(run, stack.problems.slice(33, 34), { samples: 2, rollout: { turns: 1 } });
    const joined = async () =>
      (await stack.pool.query('SELECT joined FROM rollout_groups WHERE group_id = $1', [groups[0]!.groupId])).rows[0]?.joined;
    await expect.poll(joined, { timeout: 20_000 }).toBe(2);
    // The dead controller's last act: the admission committed, the signals never sent.
    expect((await admitGroups(stack.pool, run.runId)).map((g) => g.groupId)).toEqual([groups[0]!.groupId]);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await stack.exported(`${groups[0]!.groupId}/`)).toHaveLength(0);

    const restarted = Date.now();
    stopController = await stack.startController();
    const results = await client.wait(groups);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(Date.now() - restarted).toBeLessThan(30_000); // members re-check on their own only after 60 s
  });
});

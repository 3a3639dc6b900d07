import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { LeaseLost, UnknownBatch } from '../../src/store/write/batches.js';
import { openDatabase } from '../../src/store/database.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { startTestStack, type TestStack } from './local-stack.js';

let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;
let client: RolloutClient;

beforeAll(async () => {
  stack = await startTestStack({ seed: 11 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController();
  client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
});

afterAll(async () => {
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
});

/** A run with no practical bound, fully generated before anything is consumed. */
async function finishedRun(runId: string, groups: number, offset: number): Promise<RunConfig> {
  const run: RunConfig = { runId, maxHeadOffpolicyness: 1000, batchSize: 1, maxConcurrent: 64 };
  await client.wait(await client.submit(run, stack.problems.slice(offset, offset + groups), { samples: 2, rollout: { turns: 1 } }));
  await expect.poll(async () => (await client.status(runId))!.unconsumed, { timeout: 30_000 }).toBe(groups);
  return run;
}

describe('exactly-once batch consumption', () => {
  it('hands each group to exactly one of several concurrent consumers, whole, oldest birth_time first', async () => {
    const run = await finishedRun('concurrent', 16, 0);
    const consumers = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const pool = await openDatabase(stack.databaseUrl, { max: 2 });
        return {
          name: `c${n}`,
          pool,
          client: RolloutClient.fromConnections(stack.client, pool, stack.databaseUrl),
          batches: [] as { groupIds: string[]; birthTimes: number[] }[],
        };
      }),
    );
    await Promise.all(
      consumers.map(async (consumer) => {
        for (;;) {
          const batch = await consumer.client.consume(run.runId, 2, { consumer: consumer.name, waitMs: 0 });
          if (!batch) return;
          // Whole groups: both samples of every group, and nothing else.
          expect(batch.rows.map((row) => row.group_id).sort()).toEqual(batch.groupIds.flatMap((id) => [id, id]).sort());
          consumer.batches.push({ groupIds: batch.groupIds, birthTimes: batch.rows.map((row) => row.birth_time) });
          await consumer.client.ack(batch.batchId);
        }
      }),
    );
    await Promise.all(consumers.map((consumer) => consumer.pool.end()));

    const handedOut = consumers.flatMap((consumer) => consumer.batches.flatMap((batch) => batch.groupIds));
    expect(handedOut).toHaveLength(16);
    expect(new Set(handedOut).size).toBe(16);
    expect(consumers.filter((consumer) => consumer.batches.length > 0).length).toBeGreaterThan(1);
    for (const consumer of consumers) {
      const firsts = consumer.batches.map((batch) => Math.min(...batch.birthTimes));
      expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
    }
    expect(await client.status(run.runId)).toMatchObject({ consumed: 16, unconsumed: 0 });
  });

  it("re-delivers a killed consumer's batch after its lease, and refuses the dead consumer's late acknowledgement", async () => {
    const run = await finishedRun('lease', 4, 16);
    // A consumer in its own process claims a batch, then is killed before acknowledging it.
    const script = `
      import { RolloutClient } from ${JSON.stringify(path.resolve('dist/index.js'))};
      const client = await RolloutClient.connect();
      const batch = await client.consume('lease', 2, { consumer: 'doomed', leaseMs: 3000, waitMs: 0 });
      process.stdout.write(JSON.stringify({ batchId: batch.batchId, groupIds: batch.groupIds }) + '\\n');
      setInterval(() => {}, 60_000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const claimed = await new Promise<{ batchId: string; groupIds: string[] }>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString())));
      child.once('exit', (code) => reject(new Error(`consumer exited with ${code} before claiming`)));
    });
    child.kill('SIGKILL');
    const claimedAt = Date.now();
    expect(claimed.groupIds).toHaveLength(2);

    // While the lease holds, the other two groups go out, and the killed consumer's do not.
    const other = await client.consume(run.runId, 2, { consumer: 'survivor', waitMs: 0 });
    expect(other!.groupIds.filter((id) => claimed.groupIds.includes(id))).toEqual([]);
    await client.ack(other!.batchId);
    expect(await client.consume(run.runId, 1, { consumer: 'survivor', waitMs: 0 })).toBeUndefined();

    // After the lease, the same groups come back, whole.
    const redelivered = await client.consume(run.runId, 2, { consumer: 'survivor', waitMs: 10_000 });
    expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(2_500);
    expect([...redelivered!.groupIds].sort()).toEqual([...claimed.groupIds].sort());
    expect(redelivered!.rows).toHaveLength(4);

    await expect(client.ack(claimed.batchId)).rejects.toBeInstanceOf(LeaseLost);
    await expect(client.ack(redelivered!.batchId)).resolves.toEqual({ alreadyAcknowledged: false });
    await expect(client.ack(redelivered!.batchId)).resolves.toEqual({ alreadyAcknowledged: true });
    await expect(client.ack('00000000-0000-0000-0000-000000000000')).rejects.toBeInstanceOf(UnknownBatch);
    await expect(client.ack('not-a-batch')).rejects.toThrow(/not a batch id/);
    expect(await client.status(run.runId)).toMatchObject({ consumed: 4, unconsumed: 0 });
  });

  it('keeps a lease alive when extended, and accepts a late acknowledgement nobody contested', async () => {
    const run = await finishedRun('extend', 2, 20);
    const batch = await client.consume(run.runId, 2, { leaseMs: 1_000, waitMs: 0 });
    await client.extendLease(batch!.batchId, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await client.consume(run.runId, 1, { waitMs: 0 })).toBeUndefined();
    await expect(client.ack(batch!.batchId)).resolves.toEqual({ alreadyAcknowledged: false });
  });

  it('flags trajectories older than the bound as stale at hand-out, keeps them and counts them', async () => {
    const run: RunConfig = { runId: 'stale', maxHeadOffpolicyness: 1, batchSize: 2, maxConcurrent: 8 };
    await client.wait(await client.submit(run, stack.problems.slice(22, 24), { samples: 2, rollout: { turns: 1 } }));
    const {
      rows: [{ version }],
    } = await stack.pool.query('SELECT coalesce(max(version), 0) AS version FROM policy_versions');
    await publishPolicyVersion(stack.pool, version + 3);
    const batch = await client.consume(run.runId, 2, { waitMs: 30_000 });
    expect(batch!.rows).toHaveLength(4);
    for (const row of batch!.rows) {
      expect(row.staleness).toBe(version + 3 - Math.min(...row.version_start));
      expect(row.stale).toBe(true);
    }
    expect(batch!.staleTrajectories).toBe(4);
    await client.ack(batch!.batchId);
    expect(await client.status(run.runId)).toMatchObject({ staleTrajectories: 4, consumed: 2 });
  });

  it('streams each finished group of a run once, as it finishes', async () => {
    const run: RunConfig = { runId: 'stream', maxHeadOffpolicyness: 1000, batchSize: 1, maxConcurrent: 64 };
    const groups = await client.submit(run, stack.problems.slice(25, 30), { samples: 2, rollout: { turns: 1 } });
    const stop = new AbortController();
    const seen: string[] = [];
    for await (const group of client.completions(run.runId, { signal: stop.signal, pollMs: 50 })) {
      expect(group).toMatchObject({ completed: 2, failed: 0 });
      seen.push(group.groupId);
      if (seen.length === groups.length) setTimeout(() => stop.abort(), 500); // room for a repeat to show
    }
    expect(seen.sort()).toEqual(groups.map((g) => g.groupId).sort());
  });

  it('holds a partial batch back unless asked for one, and says so when a run does not exist', async () => {
    const run = await finishedRun('partial', 1, 24);
    expect(await client.consume(run.runId, 3, { waitMs: 300 })).toBeUndefined();
    const batch = await client.consume(run.runId, 3, { waitMs: 300, partial: true });
    expect(batch!.groupIds).toHaveLength(1);
    await expect(client.consume('no-such-run', 1, { waitMs: 0 })).rejects.toThrow(/no run no-such-run/);
  });
});

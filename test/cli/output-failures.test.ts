import { access, chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistTrajectoryActivity } from '../../src/activities/persist.js';
import { joinGroup } from '../../src/store/write/rollout-groups.js';
import { acknowledgeBatch, claimBatch, LeaseLost } from '../../src/store/write/batches.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/stack/embedded-postgres.js';
import { freePort, isListening } from '../../src/stack/free-port.js';
import { openDatabase } from '../../src/store/database.js';
import { saveFeedback, savePrompt, saveTurnOutput, saveVerdict } from '../../src/store/write/turn-store.js';
import { runCli } from './run-cli.js';

const RUN = { runId: 'lossless', maxHeadOffpolicyness: 4, batchSize: 1, maxConcurrent: 8 };
const UNWRITABLE = '/nonexistent-ratchet-folder/out.jsonl';
// Opens fine, then fails every write with ENOSPC: a disk that fills up mid-write.
const FULL_DISK = '/dev/full';

let stateDir: string;
let postgres: EmbeddedPostgres;
let pool: pg.Pool;

/** One finished group of one completed trajectory, stored the way a trajectory's activities store it. */
async function finishedGroup(name: string): Promise<void> {
  const groupId = `${RUN.runId}/${name}`;
  const trajectoryId = `${groupId}/0`;
  await joinGroup(pool, trajectoryId, name, { run: RUN, groupId, size: 1, sample: 0 });
  await savePrompt(pool, trajectoryId, [1, 2], 'prompt');
  await saveTurnOutput(pool, {
    trajectoryId,
    turn: 0,
    attempt: 1,
    contextLen: 2,
    outputIds: [3],
    outputLogprobs: [-1],
    outputVersions: [0],
    finishReason: 'stop',
    versionStart: 0,
    versionEnd: 0,
  });
  await saveVerdict(pool, trajectoryId, 0, { answerText: '4', extracted: '4', status: 'correct' });
  await saveFeedback(pool, trajectoryId, 0, [4], 'Congratulations! You are correct!');
  const turn = {
    turn: 0,
    contextLen: 2,
    outputLen: 1,
    finishReason: 'stop' as const,
    versionStart: 0,
    versionEnd: 0,
    verdict: 'correct' as const,
    success: true,
    feedbackLen: 1,
  };
  await persistTrajectoryActivity(pool)({ trajectoryId, qid: name, birthTime: 1, layout: 'seed', turns: [turn], rewards: [1], rawRewards: [1] });
}

const batches = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM rollout_batches')).rows[0]!.n);

beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-output-'));
  await chmod(stateDir, 0o755);
  postgres = await startEmbeddedPostgres(stateDir, await freePort());
  pool = await openDatabase(postgres.url, { max: 2 });
  await finishedGroup('a');
  await finishedGroup('b');
});
afterAll(async () => {
  if (pool && !pool.ended) await pool.end();
  await postgres?.stop();
  await rm(stateDir, { recursive: true, force: true });
});

describe('ratchet consume', () => {
  const consume = (out: string) =>
    runCli(['consume', '--run', RUN.runId, '--batch-size', '1', '--wait', '0', '--lease', '600', '--out', out], {
      RATCHET_STATE_DIR: stateDir,
      DATABASE_URL: postgres.url,
    });

  it('opens its output before claiming: an unwritable path claims nothing', async () => {
    const result = await consume(UNWRITABLE);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot write \/nonexistent-ratchet-folder\/out\.jsonl: ENOENT/);
    expect(await batches()).toBe(0);
  });

  it('releases the lease when writing fails, so the groups go straight to the next consumer', async () => {
    const result = await consume(FULL_DISK);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ENOSPC.*released, its 1 groups go to the next consumer/);
    const {
      rows: [failed],
    } = await pool.query<{ batch_id: string }>('SELECT batch_id FROM rollout_batches');
    // Both groups at once, although the failed consumer asked for a 600 s lease.
    const next = await claimBatch(pool, { runId: RUN.runId, batchSize: 2, consumer: 'next', leaseMs: 60_000 });
    expect(next?.groupIds.sort()).toEqual([`${RUN.runId}/a`, `${RUN.runId}/b`]);
    await expect(acknowledgeBatch(pool, failed!.batch_id)).rejects.toThrow(LeaseLost);
    await acknowledgeBatch(pool, next!.batchId);
  });
});

describe('ratchet export', () => {
  let port: number;
  beforeAll(async () => {
    // From here the CLI starts (and must stop) the embedded Postgres itself, on the same data.
    await pool.end();
    await postgres.stop();
    port = await freePort();
  });
  const exportTo = (out: string) =>
    runCli(['export', '--out', out], { RATCHET_STATE_DIR: stateDir, RATCHET_POSTGRES_PORT: String(port), DATABASE_URL: undefined });
  const running = async () =>
    (await isListening(port)) ||
    (await access(path.join(postgres.dataDir, 'postmaster.pid')).then(
      () => true,
      () => false,
    ));

  it('fails cleanly for an unwritable path, before starting Postgres', async () => {
    const result = await exportTo(UNWRITABLE);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ratchet: cannot write \/nonexistent-ratchet-folder\/out\.jsonl: ENOENT/m);
    expect(await running()).toBe(false);
  });

  it('fails cleanly when writing fails, and stops the embedded Postgres it started', async () => {
    const result = await exportTo(FULL_DISK);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ratchet: cannot write \/dev\/full: ENOSPC/m);
    expect(await running()).toBe(false);
  });

  it('still exports to a writable file (the same data)', async () => {
    const out = path.join(stateDir, 'trajectories.jsonl');
    const result = await exportTo(out);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stderr).toContain('exported 2 trajectories');
    expect(await running()).toBe(false);
  });
});

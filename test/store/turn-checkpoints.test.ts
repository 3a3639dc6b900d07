import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartialOutput } from '../../src/policy/resumable-generation.js';
import { appendTurnCheckpoint, CheckpointSuperseded, claimTurnCheckpoint, dropTurnCheckpoint } from '../../src/store/write/turn-checkpoints.js';
import { savePrompt } from '../../src/store/write/turn-store.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  // A checkpoint exists only while its trajectory runs (has its prompt row): these trajectories run.
  for (const trajectoryId of ['append', 'fenced', 'repeated', 'legacy', 'wal']) await savePrompt(db.pool, trajectoryId, [1, 2, 3], 'prompt');
});

afterAll(async () => {
  await db?.stop();
});

/** `n` tokens starting at token `from`, each with a distinct id and logprob, under `version`. */
function tokens(from: number, n: number, version = 1): PartialOutput {
  const ids = Array.from({ length: n }, (_, i) => from + i);
  return { ids, logprobs: ids.map((id) => -id / 1024), versions: ids.map(() => version) };
}

function joined(...parts: PartialOutput[]): PartialOutput {
  return { ids: parts.flatMap((p) => p.ids), logprobs: parts.flatMap((p) => p.logprobs), versions: parts.flatMap((p) => p.versions) };
}

async function storedTokens(trajectoryId: string): Promise<number | undefined> {
  const { rows } = await db.pool.query<{ token_count: number }>('SELECT token_count FROM turn_checkpoints WHERE trajectory_id = $1', [trajectoryId]);
  return rows[0]?.token_count;
}

describe('turn checkpoints', () => {
  it('append pieces in order and hand them, versions included, to the attempt that claims the turn next', async () => {
    const first = { trajectoryId: 'append', turn: 2, attempt: 1 };
    expect(await appendTurnCheckpoint(db.pool, first, 0, tokens(0, 100, 3))).toBe(true);
    expect(await appendTurnCheckpoint(db.pool, first, 100, tokens(100, 50, 4))).toBe(true);
    expect(await storedTokens('append')).toBe(150);
    const resumed = await claimTurnCheckpoint(db.pool, { ...first, attempt: 2 });
    expect(resumed).toEqual(joined(tokens(0, 100, 3), tokens(100, 50, 4)));
  });

  it('fence off an older attempt once a newer one claimed the turn', async () => {
    const old = { trajectoryId: 'fenced', turn: 0, attempt: 1 };
    expect(await appendTurnCheckpoint(db.pool, old, 0, tokens(0, 10))).toBe(true);
    expect(await claimTurnCheckpoint(db.pool, { ...old, attempt: 2 })).toEqual(tokens(0, 10));
    // The old attempt, timed out but alive, keeps streaming: nothing it sends lands.
    expect(await appendTurnCheckpoint(db.pool, old, 10, tokens(10, 5))).toBe(false);
    await expect(claimTurnCheckpoint(db.pool, old)).rejects.toBeInstanceOf(CheckpointSuperseded);
    await dropTurnCheckpoint(db.pool, old);
    expect(await storedTokens('fenced')).toBe(10);
    // The owner goes on from where it resumed, and its drop removes the row with its pieces.
    expect(await appendTurnCheckpoint(db.pool, { ...old, attempt: 2 }, 10, tokens(10, 5))).toBe(true);
    await dropTurnCheckpoint(db.pool, { ...old, attempt: 2 });
    expect(await storedTokens('fenced')).toBeUndefined();
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM turn_checkpoint_pieces WHERE trajectory_id = 'fenced'");
    expect(rows[0].n).toBe(0);
  });

  it('reject a repeated append, so no token is stored twice', async () => {
    const key = { trajectoryId: 'repeated', turn: 1, attempt: 1 };
    expect(await appendTurnCheckpoint(db.pool, key, 0, tokens(0, 8))).toBe(true);
    expect(await appendTurnCheckpoint(db.pool, key, 0, tokens(0, 8))).toBe(false);
    expect(await appendTurnCheckpoint(db.pool, key, 8, tokens(8, 8))).toBe(true);
    expect(await appendTurnCheckpoint(db.pool, key, 8, tokens(8, 8))).toBe(false);
    expect(await claimTurnCheckpoint(db.pool, { ...key, attempt: 2 })).toEqual(tokens(0, 16));
  });

  it('do not create a checkpoint from an append past its start (the turn was stored meanwhile)', async () => {
    expect(await appendTurnCheckpoint(db.pool, { trajectoryId: 'gone', turn: 0, attempt: 1 }, 40, tokens(40, 8))).toBe(false);
    expect(await storedTokens('gone')).toBeUndefined();
  });

  it('resume from the tokens an earlier release heartbeated when they are more than the checkpoint holds', async () => {
    const carried = tokens(0, 30, 7);
    expect(await claimTurnCheckpoint(db.pool, { trajectoryId: 'legacy', turn: 0, attempt: 2 }, carried)).toEqual(carried);
    expect(await storedTokens('legacy')).toBe(30);
    // A later attempt of this release appends after them, and the one after that resumes from the checkpoint,
    // not from the stale legacy heartbeat Temporal still holds.
    expect(await appendTurnCheckpoint(db.pool, { trajectoryId: 'legacy', turn: 0, attempt: 2 }, 30, tokens(30, 20, 8))).toBe(true);
    expect(await claimTurnCheckpoint(db.pool, { trajectoryId: 'legacy', turn: 0, attempt: 3 }, carried)).toEqual(joined(carried, tokens(30, 20, 8)));
  });

  it('write each token once: WAL for a 200K-token turn in 50 appends stays within a small multiple of its size', async () => {
    const key = { trajectoryId: 'wal', turn: 0, attempt: 1 };
    const lsn = async () => (await db.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    const before = await lsn();
    for (let from = 0; from < 200_000; from += 4_000) expect(await appendTurnCheckpoint(db.pool, key, from, tokens(from, 4_000))).toBe(true);
    const { rows } = await db.pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS bytes', [before]);
    const payload = 200_000 * 12;
    console.log(`checkpoint of 200K tokens in 50 appends: ${payload} payload bytes, ${rows[0]!.bytes} WAL bytes`);
    // Rewriting a growing value on each append would log ~25 times the payload here.
    expect(Number(rows[0]!.bytes)).toBeLessThan(3 * payload);
    expect((await claimTurnCheckpoint(db.pool, { ...key, attempt: 2 })).ids).toHaveLength(200_000);
  });
});

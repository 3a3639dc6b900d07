import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointHeartbeat } from '../../src/activities/partial-output.js';
import { encodePartialOutput } from '../../src/activities/releases/token-heartbeats.js';
import { resumeTurn, TurnCheckpointWriter } from '../../src/activities/turn-checkpoint.js';
import type { PartialOutput } from '../../src/policy/resumable-generation.js';
import { CheckpointSuperseded, claimTurnCheckpoint } from '../../src/store/write/turn-checkpoints.js';
import { savePrompt } from '../../src/store/write/turn-store.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  // A checkpoint exists only while its trajectory runs (has its prompt row): these trajectories run.
  for (const trajectoryId of ['deploy', 'coalesce', 'stale']) await savePrompt(db.pool, trajectoryId, [1, 2, 3], 'prompt');
});

afterAll(async () => {
  await db?.stop();
});

/** Streams `n` more tokens into `output`, as generateResumable does chunk by chunk. */
function stream(output: PartialOutput, n: number, version = 1): PartialOutput {
  for (let i = 0; i < n; i++) {
    output.ids.push(output.ids.length);
    output.logprobs.push(-0.5);
    output.versions.push(version);
  }
  return output;
}

describe('resuming a turn', () => {
  it('starts a first attempt empty without touching the database', async () => {
    expect(await resumeTurn(db.pool, { trajectoryId: 'fresh', turn: 0, attempt: 1 }, undefined)).toEqual({
      resumed: { ids: [], logprobs: [], versions: [] },
      claimed: false,
    });
    const { rows } = await db.pool.query("SELECT 1 FROM turn_checkpoints WHERE trajectory_id = 'fresh'");
    expect(rows).toHaveLength(0);
  });

  it('resumes a retry from the tokens an earlier release heartbeated, then from the checkpoint it extends', async () => {
    const carried = stream({ ids: [], logprobs: [], versions: [] }, 40, 2);
    const second = await resumeTurn(db.pool, { trajectoryId: 'deploy', turn: 1, attempt: 2 }, encodePartialOutput(carried));
    expect(second).toEqual({ resumed: carried, claimed: true });
    const writer = new TurnCheckpointWriter(db.pool, { trajectoryId: 'deploy', turn: 1, attempt: 2 }, 40, () => undefined);
    writer.offer(stream(second.resumed, 10, 3));
    await writer.settle();
    const third = await resumeTurn(db.pool, { trajectoryId: 'deploy', turn: 1, attempt: 3 }, checkpointHeartbeat({ attempt: 2, tokens: 50 }));
    expect(third.resumed.ids).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(third.resumed.versions).toEqual([...Array(40).fill(2), ...Array(10).fill(3)]);
  });
});

describe('checkpointing a generating turn', () => {
  it('keeps one write in flight and folds the requests made meanwhile into the next, committing every token', async () => {
    const committed: number[] = [];
    const writer = new TurnCheckpointWriter(db.pool, { trajectoryId: 'coalesce', turn: 0, attempt: 1 }, 0, (tokens) => committed.push(tokens));
    const output: PartialOutput = { ids: [], logprobs: [], versions: [] };
    for (let offer = 0; offer < 200; offer++) writer.offer(stream(output, 16));
    await writer.settle();
    // 200 requests, all made while the first write was in flight: one write for it, one for the rest.
    expect(writer.writes).toBe(2);
    expect(committed).toEqual([16, 3_200]);
    expect(writer.bytesWritten).toBe(3_200 * 12);
    expect((await claimTurnCheckpoint(db.pool, { trajectoryId: 'coalesce', turn: 0, attempt: 2 })).ids).toEqual(output.ids);
  });

  it('aborts generation when a newer attempt claims the turn, and reports why', async () => {
    const committed: number[] = [];
    const writer = new TurnCheckpointWriter(db.pool, { trajectoryId: 'stale', turn: 0, attempt: 1 }, 0, (tokens) => committed.push(tokens));
    const output = stream({ ids: [], logprobs: [], versions: [] }, 8);
    writer.offer(output);
    await writer.settle();
    await claimTurnCheckpoint(db.pool, { trajectoryId: 'stale', turn: 0, attempt: 2 });
    writer.offer(stream(output, 8));
    await expect(writer.settle()).rejects.toBeInstanceOf(CheckpointSuperseded);
    expect(writer.signal.aborted).toBe(true);
    expect(writer.signal.reason).toBeInstanceOf(CheckpointSuperseded);
    // No heartbeat points past what the checkpoint holds.
    expect(committed).toEqual([8]);
  });

  it("aborts with the activity's cancellation, whose reason it carries, without counting it as a lost checkpoint", () => {
    const key = { trajectoryId: 'cancelled', turn: 0, attempt: 1 };
    const cancellation = new AbortController();
    const writer = new TurnCheckpointWriter(db.pool, key, 0, () => undefined, cancellation.signal);
    expect(writer.signal.aborted).toBe(false);
    const reason = new Error('activity cancelled');
    cancellation.abort(reason);
    expect(writer.signal.aborted).toBe(true);
    expect(writer.signal.reason).toBe(reason);
    expect(writer.stopped).toBeUndefined();
    const late = new TurnCheckpointWriter(db.pool, key, 0, () => undefined, AbortSignal.abort(reason));
    expect(late.signal.reason).toBe(reason);
  });
});

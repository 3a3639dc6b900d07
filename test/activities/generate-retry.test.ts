import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateActivity, type GenerateResult } from '../../src/activities/generate.js';
import { checkpointHeartbeat } from '../../src/activities/partial-output.js';
import { savePrompt } from '../../src/store/write/turn-store.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { ScriptedBackend } from '../policy/fakes/scripted-backend.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

/** Answers every request with the same 40 tokens in chunks of 8 under version 3. */
function countingBackend(): ScriptedBackend {
  return new ScriptedBackend([{ ids: Array.from({ length: 40 }, (_, i) => 1000 + i), logprob: -0.25, chunk: 8, weightVersion: 3 }], 'sglang', '3');
}

describe('a generate retry after an attempt that stored the whole turn and died before Temporal heard of it', () => {
  it('takes the stored turn as it is: no request to the server, every token carried over', async () => {
    const trajectoryId = 'stored-then-died';
    const contextLen = (await savePrompt(db.pool, trajectoryId, [1, 2, 3, 4, 5], 'What is 2+2?'))!;
    const backend = countingBackend();
    const generate = generateActivity(db.pool, backend, () => 3, 60_000);
    const input = { trajectoryId, turn: 0, contextLen, maxNewTokens: 100, temperature: 1 };

    // Attempt 1 generates and stores the turn; its completion never reaches the server (the worker was killed).
    const first: GenerateResult = await new MockActivityEnvironment({ attempt: 1 }).run(generate, input);
    expect(first).toMatchObject({ outputLen: 40, finishReason: 'stop', versionStart: 3, versionEnd: 3, resumedTokens: 0 });

    // Attempt 2 finds the stored turn: the same result, nothing generated again.
    const retry = await new MockActivityEnvironment({ attempt: 2, heartbeatDetails: checkpointHeartbeat({ attempt: 1, tokens: 32 }) }).run(
      generate,
      input,
    );
    expect(retry).toEqual({ ...first, resumedTokens: 40 });
    expect(backend.requests.length).toBe(1);
    const { rows } = await db.pool.query('SELECT attempt FROM turn_outputs WHERE trajectory_id = $1', [trajectoryId]);
    expect(rows).toEqual([{ attempt: 1 }]);
    expect((await db.pool.query('SELECT 1 FROM turn_checkpoints WHERE trajectory_id = $1', [trajectoryId])).rowCount).toBe(0);
  });

  it('generates the turn when the stored output belongs to another context (never passes off a stale row)', async () => {
    const trajectoryId = 'stale-row';
    const contextLen = (await savePrompt(db.pool, trajectoryId, [1, 2, 3], 'What is 3+3?'))!;
    const backend = countingBackend();
    const generate = generateActivity(db.pool, backend, () => 3, 60_000);
    await db.pool.query(
      `INSERT INTO turn_outputs (trajectory_id, turn, attempt, context_len, output_ids, output_logprobs, finish_reason, version_start, version_end)
       VALUES ($1, 0, 1, 99, '\\x01000000'::bytea, '\\x00000000'::bytea, 'stop', 0, 0)`,
      [trajectoryId],
    );
    const retry = await new MockActivityEnvironment({ attempt: 2 }).run(generate, {
      trajectoryId,
      turn: 0,
      contextLen,
      maxNewTokens: 100,
      temperature: 1,
    });
    expect(retry).toMatchObject({ outputLen: 40, resumedTokens: 0 });
    expect(backend.requests.length).toBe(1);
  });
});

describe('a generate attempt cancelled by Temporal', () => {
  it("stops the server's stream at once, with the cancellation as the reason", async () => {
    const trajectoryId = 'cancelled-mid-stream';
    const contextLen = (await savePrompt(db.pool, trajectoryId, [1, 2, 3, 4, 5], 'What is 2+2?'))!;
    let seen: AbortSignal | undefined;
    const backend = countingBackend();
    // A server that streams until the request's signal stops it.
    backend.generate = (request) => {
      seen = request.signal;
      return new Promise((_, reject) => request.signal!.addEventListener('abort', () => reject(request.signal!.reason), { once: true }));
    };
    const env = new MockActivityEnvironment({ attempt: 1 });
    const attempt = env.run(
      generateActivity(db.pool, backend, () => 3, 60_000),
      { trajectoryId, turn: 0, contextLen, maxNewTokens: 100, temperature: 1 },
    );
    await vi.waitFor(() => expect(seen).toBeDefined());
    env.cancel('CANCELLED');
    await expect(attempt).rejects.toThrow(/cancel/i);
    expect(seen!.aborted).toBe(true);
  });
});

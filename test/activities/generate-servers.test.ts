import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateActivity, type GenerateResult } from '../../src/activities/generate.js';
import { savePrompt } from '../../src/store/write/turn-store.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { ScriptedBackend } from '../policy/fakes/scripted-backend.js';

// Each turn's server and its prefix-cache hit, as the generate activity stores them with the turn (issue 27).
let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

async function generateOn(trajectoryId: string, backend: ScriptedBackend, affinityQueue?: string, scheduledMsAgo = 0) {
  const contextLen = (await savePrompt(db.pool, trajectoryId, [1, 2, 3, 4, 5], 'What is 2+2?'))!;
  const generate = generateActivity(db.pool, backend, () => 0, 60_000, undefined, affinityQueue);
  const result: GenerateResult = await new MockActivityEnvironment({
    attempt: 1,
    currentAttemptScheduledTimestampMs: Date.now() - scheduledMsAgo,
  }).run(generate, {
    trajectoryId,
    turn: 0,
    contextLen,
    maxNewTokens: 100,
    temperature: 1,
  });
  const {
    rows: [row],
  } = await db.pool.query('SELECT served_by, cached_tokens, queue_ms, generate_ms FROM turn_outputs WHERE trajectory_id = $1 AND turn = 0', [
    trajectoryId,
  ]);
  return { result, row };
}

describe('the generate activity', () => {
  it("stores the worker's own task queue as the turn's server, and the cached tokens its server reported", async () => {
    const { result, row } = await generateOn(
      'served/a',
      new ScriptedBackend([{ ids: [7, 8, 9], cachedTokens: 4 }]),
      'ratchet-gpu@host/127.0.0.1:30000',
    );
    expect(result.affinityQueue).toBe('ratchet-gpu@host/127.0.0.1:30000');
    expect(row).toMatchObject({ served_by: 'ratchet-gpu@host/127.0.0.1:30000', cached_tokens: 4 });
  });

  it('stores the backend URL for a worker without a queue of its own, and NULL where the server reports no cached tokens', async () => {
    const { row } = await generateOn('served/b', new ScriptedBackend([{ ids: [7, 8, 9] }]));
    expect(row).toMatchObject({ served_by: 'http://scripted.invalid', cached_tokens: null });
  });

  it("stores the attempt's queue wait from Temporal's schedule time of the attempt, and its generation time (migration 018)", async () => {
    const { row } = await generateOn('served/timed', new ScriptedBackend([{ ids: [7, 8, 9] }]), undefined, 1_500);
    expect(row.queue_ms).toBeGreaterThanOrEqual(1_500);
    expect(row.queue_ms).toBeLessThan(1_500 + 5_000);
    expect(row.generate_ms).toBeGreaterThanOrEqual(0);
    expect(row.generate_ms).toBeLessThan(5_000);
  });
});

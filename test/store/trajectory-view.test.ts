import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveTrajectories } from '../../src/store/read/live-views.js';
import { appendTurnCheckpoint, claimTurnCheckpoint } from '../../src/store/write/turn-checkpoints.js';
import { saveTurnOutput, saveVerdictAndFeedback, savePrompt } from '../../src/store/write/turn-store.js';
import { loadTrajectoryView } from '../../src/store/read/trajectory-view.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

// A trajectory in the middle of its second turn, written with the store functions the activities use.
let db: TestDatabase;
const id = 'view/q1/0';

beforeAll(async () => {
  db = await startTestDatabase();
  await savePrompt(db.pool, id, [1, 2, 3], 'prompt');
  await saveTurnOutput(db.pool, {
    trajectoryId: id,
    turn: 0,
    attempt: 1,
    contextLen: 3,
    outputIds: [10, 11],
    outputLogprobs: [-0.5, -0.25],
    outputVersions: [0, 1],
    finishReason: 'stop',
    versionStart: 0,
    versionEnd: 1,
  });
  await saveVerdictAndFeedback(db.pool, id, 0, { answerText: 'x = 6', extracted: '6', status: 'wrong' }, { ids: [90, 91], text: 'try again' });
  // Turn 1's first attempt died after 2 tokens; the second resumed from its checkpoint and added 1.
  await appendTurnCheckpoint(db.pool, { trajectoryId: id, turn: 1, attempt: 1 }, 0, { ids: [20, 21], logprobs: [-1, -1], versions: [1, 1] });
  const resumed = await claimTurnCheckpoint(db.pool, { trajectoryId: id, turn: 1, attempt: 2 });
  await appendTurnCheckpoint(db.pool, { trajectoryId: id, turn: 1, attempt: 2 }, resumed.ids.length, { ids: [22], logprobs: [-2], versions: [2] });
});

afterAll(async () => {
  await db?.stop();
});

describe("the viewer's view of a running trajectory", () => {
  it('shows stored turns with verdict and feedback, and the turn being generated from its checkpoint', async () => {
    const view = await loadTrajectoryView(db.pool, id);
    expect(view.status).toBe('running');
    expect(view.promptIds).toEqual([1, 2, 3]);
    expect(view.turns).toHaveLength(1);
    expect(view.turns[0]).toMatchObject({
      outputIds: [10, 11],
      outputLogprobs: [-0.5, -0.25],
      outputVersions: [0, 1],
      feedbackIds: [90, 91],
      answerText: 'x = 6',
      extractedAnswer: '6',
      verdict: 'wrong',
      feedbackText: 'try again',
      success: false,
      finishReason: 'stop',
    });
    expect(view.generating).toMatchObject({ turn: 1, attempt: 2, ids: [20, 21, 22], versions: [1, 1, 2] });
  });

  it('lists it as generating turn 1, retried', async () => {
    const [live] = (await liveTrajectories(db.pool)).filter((t) => t.trajectoryId === id);
    expect(live).toMatchObject({ phase: 'generating', turn: 1, tokens: 3, storedAttempt: 2 });
  });

  it('calls an id Postgres has never seen unknown', async () => {
    expect((await loadTrajectoryView(db.pool, 'view/none/0')).status).toBe('unknown');
  });
});

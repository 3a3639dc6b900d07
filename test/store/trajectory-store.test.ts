import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistFailureActivity, persistTrajectoryActivity } from '../../src/activities/persist.js';
import { storeFailedTrajectory } from '../../src/store/write/trajectory-store.js';
import { readTrajectories, type ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { saveFeedback, savePrompt, saveTurnOutput, saveVerdict } from '../../src/store/write/turn-store.js';
import type { StoredTurn } from '../../src/store/write/turn-store.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

const identity = (trajectoryId: string, qid = 'q-1') => ({ trajectoryId, qid, birthTime: 1_730_000_000_000, layout: 'seed' });

async function exported(trajectoryId: string): Promise<ExportedTrajectory | undefined> {
  for await (const row of readTrajectories(db.pool, { includeFailed: true })) if (row.trajectory_id === trajectoryId) return row;
  return undefined;
}

/** One generated, verified turn in the working tables, as the activities leave it. */
async function workingTurn(trajectoryId: string, answerText: string): Promise<void> {
  await savePrompt(db.pool, trajectoryId, [1, 2, 3], 'prompt');
  await saveTurnOutput(db.pool, {
    trajectoryId,
    turn: 0,
    attempt: 1,
    contextLen: 3,
    outputIds: [10, 11],
    outputLogprobs: [-0.5, -0.25],
    outputVersions: [0, 0],
    finishReason: 'stop',
    versionStart: 0,
    versionEnd: 0,
  });
  await saveVerdict(db.pool, trajectoryId, 0, { answerText, extracted: '4', status: 'correct' });
  await saveFeedback(db.pool, trajectoryId, 0, [20], 'Congratulations! You are correct!');
}

describe('storeFailedTrajectory', () => {
  it('stores the failure type and class, and exports them', async () => {
    const persistFailure = persistFailureActivity(db.pool);
    const failure = {
      turnsDone: 0,
      error: 'Activity task failed: verifying t turn 0 ran past its budget',
      failureType: 'VerifierTimeout',
      failureClass: 'data' as const,
    };
    expect(await persistFailure({ ...identity('typed/0'), ...failure })).toEqual({ stored: true });
    expect(await exported('typed/0')).toMatchObject({
      status: 'failed',
      error: failure.error,
      failure_type: 'VerifierTimeout',
      failure_class: 'data',
    });
    // A retried activity changes nothing, and answers with the stored type and class (the workflow fails as the row says).
    expect(await persistFailure({ ...identity('typed/0'), ...failure, failureType: 'InternalError' })).toEqual({
      stored: false,
      existing: 'failed',
      failureType: 'VerifierTimeout',
      failureClass: 'data',
    });
    expect(await exported('typed/0')).toMatchObject({ failure_type: 'VerifierTimeout' });
  });

  it('stores a failure whose message, qid and answer text hold NUL bytes and lone surrogates', async () => {
    const texts: StoredTurn[] = [
      {
        turn: 0,
        contextLen: 3,
        outputIds: [10],
        outputLogprobs: [-1],
        outputVersions: [0],
        feedbackIds: [20],
        answerText: 'the answer is \u0000 4 \uD800',
        extractedAnswer: '4\u0000',
        verdict: 'wrong',
        feedbackText: 'try \uDC00again',
      },
    ];
    const stored = await storeFailedTrajectory(
      db.pool,
      identity('nul/0', 'q\u0000\uD83D'),
      {
        turnsDone: 1,
        message: 'server said \u0000 and \uDFFF',
        failureType: 'PolicyRejectedRequest',
        failureClass: 'data',
      },
      texts,
    );
    expect(stored).toBe(true);
    expect(await exported('nul/0')).toMatchObject({
      qid: 'q\uFFFD\uFFFD',
      error: 'server said \uFFFD and \uFFFD',
      failure_type: 'PolicyRejectedRequest',
    });
    const { rows } = await db.pool.query('SELECT answer_text, extracted_answer, feedback_text FROM turn_texts WHERE trajectory_id = $1', ['nul/0']);
    expect(rows).toEqual([{ answer_text: 'the answer is \uFFFD 4 \uFFFD', extracted_answer: '4\uFFFD', feedback_text: 'try \uFFFDagain' }]);
  });

  it('stores a failure whose trajectory id Postgres cannot hold, under the storable id', async () => {
    const persistFailure = persistFailureActivity(db.pool);
    expect(
      await persistFailure({
        ...identity('bad\u0000id'),
        turnsDone: 0,
        error: 'InvalidRequest: trajectoryId',
        failureType: 'InvalidRequest',
        failureClass: 'data',
      }),
    ).toEqual({ stored: true });
    expect(await exported('bad\uFFFDid')).toMatchObject({ failure_type: 'InvalidRequest', failure_class: 'data' });
  });

  it('derives type and class from the message when an earlier release sent none', async () => {
    const persistFailure = persistFailureActivity(db.pool);
    await workingTurn('legacy/0', 'I think it is 4');
    const rejected = 'Activity task failed: inference server http://127.0.0.1:1/generate rejected the request (HTTP 400): too long';
    expect(await persistFailure({ ...identity('legacy/0'), turnsDone: 1, error: rejected })).toEqual({ stored: true });
    expect(await exported('legacy/0')).toMatchObject({ failure_type: 'PolicyRejectedRequest', failure_class: 'data' });
    // The finished turn's texts are kept; the working rows are gone.
    expect((await db.pool.query("SELECT answer_text FROM turn_texts WHERE trajectory_id = 'legacy/0'")).rows).toEqual([
      { answer_text: 'I think it is 4' },
    ]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM turn_outputs WHERE trajectory_id = 'legacy/0'")).rows[0].n).toBe(0);

    await persistFailure({ ...identity('legacy/1'), turnsDone: 0, error: 'Activity task failed: something nobody anticipated' });
    expect(await exported('legacy/1')).toMatchObject({ failure_type: 'InternalError', failure_class: 'infrastructure' });
    // A class that is not one of the two is not trusted (the CHECK would reject it and the row would be lost).
    await persistFailure({ ...identity('legacy/2'), turnsDone: 0, error: 'x', failureType: 'ContextExhausted', failureClass: 'weather' as 'data' });
    expect(await exported('legacy/2')).toMatchObject({ failure_type: 'ContextExhausted', failure_class: 'data' });
  });
});

describe('storeCompletedTrajectory', () => {
  it('leaves the failure columns null and makes the qid storable', async () => {
    await workingTurn('done/0', 'it is 4');
    const turn = {
      turn: 0,
      contextLen: 3,
      outputLen: 2,
      finishReason: 'stop' as const,
      versionStart: 0,
      versionEnd: 0,
      verdict: 'correct' as const,
      success: true,
      feedbackLen: 1,
    };
    const persistTrajectory = persistTrajectoryActivity(db.pool);
    expect(await persistTrajectory({ ...identity('done/0', 'q\u0000'), layout: 'seed', turns: [turn], rewards: [1], rawRewards: [1] })).toEqual({
      stored: true,
    });
    const row = (await exported('done/0'))!;
    expect(row).toMatchObject({ status: 'completed', qid: 'q\uFFFD' });
    expect(row).not.toHaveProperty('failure_type');
    expect(row).not.toHaveProperty('failure_class');
    const { rows } = await db.pool.query("SELECT failure_type, failure_class FROM trajectories WHERE trajectory_id = 'done/0'");
    expect(rows).toEqual([{ failure_type: null, failure_class: null }]);
  });

  it('stores and exports the sampling its tokens were drawn with, exactly as sent', async () => {
    await workingTurn('sampled/0', 'it is 4');
    const sampling = { temperature: 0.7, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1.1 };
    expect(
      await persistTrajectoryActivity(db.pool)({
        ...identity('sampled/0'),
        layout: 'seed',
        turns: [doneTurn],
        rewards: [1],
        rawRewards: [1],
        sampling,
      }),
    ).toEqual({ stored: true });
    expect(await exported('sampled/0')).toMatchObject({ temperature: 0.7, top_p: 0.95, top_k: 20, min_p: 0.05, repetition_penalty: 1.1 });
  });

  it('exports the environment it ran in, null for a row stored before environments (issue 36)', async () => {
    await workingTurn('env-named/0', 'it is 4');
    await persistTrajectoryActivity(db.pool)({
      ...identity('env-named/0'),
      layout: 'seed',
      turns: [doneTurn],
      rewards: [1],
      rawRewards: [1],
      environment: 'guess-number',
    });
    await workingTurn('env-none/0', 'it is 4');
    await persistTrajectoryActivity(db.pool)({ ...identity('env-none/0'), layout: 'seed', turns: [doneTurn], rewards: [1], rawRewards: [1] });
    expect(await exported('env-named/0')).toMatchObject({ environment: 'guess-number' });
    expect(await exported('env-none/0')).toMatchObject({ environment: null });
  });

  it("leaves the sampling unknown (null) when an earlier release's workflow persisted without it", async () => {
    await workingTurn('unsampled/0', 'it is 4');
    await persistTrajectoryActivity(db.pool)({ ...identity('unsampled/0'), layout: 'seed', turns: [doneTurn], rewards: [1], rawRewards: [1] });
    expect(await exported('unsampled/0')).toMatchObject({ temperature: null, top_p: null, top_k: null, min_p: null, repetition_penalty: null });
  });
});

const doneTurn = {
  turn: 0,
  contextLen: 3,
  outputLen: 2,
  finishReason: 'stop' as const,
  versionStart: 0,
  versionEnd: 0,
  verdict: 'correct' as const,
  success: true,
  feedbackLen: 1,
};

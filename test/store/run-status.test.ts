import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { persistFailureActivity, persistTrajectoryActivity } from '../../src/activities/persist.js';
import { joinGroup } from '../../src/store/write/rollout-groups.js';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { runStatus } from '../../src/store/read/run-status.js';
import { saveFeedback, savePrompt, saveTurnOutput, saveVerdict } from '../../src/store/write/turn-store.js';
import type { FailureClass } from '../../src/trajectory/failure.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

const runOf = (runId: string): RunConfig => ({ runId, maxHeadOffpolicyness: 4, batchSize: 1, maxConcurrent: 8 });

/** Registers every member of a group, as its trajectories do when they start. */
async function group(run: RunConfig, name: string, size: number): Promise<string[]> {
  const groupId = `${run.runId}/${name}`;
  const ids = Array.from({ length: size }, (_, sample) => `${groupId}/${sample}`);
  for (const [sample, id] of ids.entries()) await joinGroup(db.pool, id, name, { run, groupId, size, sample });
  return ids;
}

async function fail(trajectoryId: string, failureType: string, failureClass: FailureClass): Promise<void> {
  await persistFailureActivity(db.pool)({
    trajectoryId,
    qid: 'q',
    birthTime: 1,
    layout: 'seed',
    turnsDone: 0,
    error: `${failureType}: test`,
    failureType,
    failureClass,
  });
}

async function complete(trajectoryId: string): Promise<void> {
  await savePrompt(db.pool, trajectoryId, [1, 2], 'prompt');
  await saveTurnOutput(db.pool, {
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
  await saveVerdict(db.pool, trajectoryId, 0, { answerText: '4', extracted: '4', status: 'correct' });
  await saveFeedback(db.pool, trajectoryId, 0, [4], 'Congratulations! You are correct!');
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
  await persistTrajectoryActivity(db.pool)({ trajectoryId, qid: 'q', birthTime: 1, layout: 'seed', turns: [turn], rewards: [1], rawRewards: [1] });
}

describe('runStatus', () => {
  it("counts a run's failed trajectories by type and by class, and no other run's", async () => {
    const run = runOf('failures');
    const [a0, a1] = await group(run, 'a', 2);
    const [b0, b1, b2] = await group(run, 'b', 3);
    const [other] = await group(runOf('elsewhere'), 'c', 1);
    await fail(a0!, 'PolicyUnavailable', 'infrastructure');
    await fail(a1!, 'ContextExhausted', 'data');
    await fail(b0!, 'PolicyUnavailable', 'infrastructure');
    await complete(b2!);
    await fail(other!, 'WorkerLost', 'infrastructure');
    // A row stored before failure types existed has neither column (written as that release wrote it: the counts are
    // kept as rows are inserted, so a later UPDATE of a stored row is not how such a row comes about).
    await db.pool.query(
      `INSERT INTO trajectories (trajectory_id, qid, status, error, layout, num_turns, birth_time) VALUES ($1, 'q', 'failed', 'old', 'seed', 0, 1)`,
      [b1],
    );

    const status = (await runStatus(db.pool, run.runId))!;
    expect(status.failures).toEqual({
      failed: 4,
      byType: { ContextExhausted: 1, InternalError: 1, PolicyUnavailable: 2 },
      byClass: { infrastructure: 3, data: 1 },
    });
    expect((await runStatus(db.pool, 'elsewhere'))!.failures).toEqual({
      failed: 1,
      byType: { WorkerLost: 1 },
      byClass: { infrastructure: 1, data: 0 },
    });
  });

  it('reports no failures for a run with none', async () => {
    const run = runOf('clean');
    const [only] = await group(run, 'a', 1);
    await complete(only!);
    expect((await runStatus(db.pool, run.runId))!.failures).toEqual({ failed: 0, byType: {}, byClass: { infrastructure: 0, data: 0 } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnknownRun } from '../../src/store/write/batches.js';
import { ensureRun } from '../../src/store/write/rollout-groups.js';
import { recordTrainingStep, trainingSteps } from '../../src/store/write/training-steps.js';
import { rewardsByVersion } from '../../src/store/read/version-rewards.js';
import { InvalidTrainingStep } from '../../src/training/training-step.js';
import { seedTrainingRun, STEPS, TRAINING_RUN } from './training-run.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrainingRun(db.pool);
});

afterAll(async () => {
  await db?.stop();
});

describe('training steps', () => {
  it("reads a run's steps back in step order, unknown metrics kept beside the known ones", async () => {
    const steps = await trainingSteps(db.pool, 'steps');
    expect(steps.map(({ step, policyVersion, metrics }) => ({ step, policyVersion, metrics }))).toEqual(STEPS);
    expect(steps.every((s) => s.runId === 'steps' && s.recordedAt instanceof Date)).toBe(true);
  });

  it('replaces a step recorded again: a trainer that died mid-step redoes it', async () => {
    await ensureRun(db.pool, { ...TRAINING_RUN, runId: 'redo' });
    await recordTrainingStep(db.pool, 'redo', 0, 1, { loss: 2 });
    const [first] = await trainingSteps(db.pool, 'redo');
    await recordTrainingStep(db.pool, 'redo', 0, 1, { loss: 1.5, mean_reward: 0.1 });
    const steps = await trainingSteps(db.pool, 'redo');
    expect(steps.map((s) => [s.step, s.metrics])).toEqual([[0, { loss: 1.5, mean_reward: 0.1 }]]);
    expect(steps[0]!.recordedAt.getTime()).toBeGreaterThanOrEqual(first!.recordedAt.getTime());
  });

  it('refuses a run never submitted to, a negative step and a metric that is not a finite number, naming it', async () => {
    await expect(recordTrainingStep(db.pool, 'no-such-run', 0, 1, {})).rejects.toThrow(UnknownRun);
    await expect(recordTrainingStep(db.pool, 'steps', -1, 1, {})).rejects.toThrow(
      new InvalidTrainingStep('training step -1 of run steps: the step must be a non-negative integer, got -1'),
    );
    await expect(recordTrainingStep(db.pool, 'steps', 9, 1, { loss: Number.NaN })).rejects.toThrow(/metric loss is NaN, not a finite number/);
    await expect(recordTrainingStep(db.pool, 'steps', 9, 1, { loss: Infinity })).rejects.toThrow(InvalidTrainingStep);
    expect((await trainingSteps(db.pool, 'steps')).map((s) => s.step)).toEqual([0, 1, 2]);
  });

  it('holds the same rules in Postgres for a client that skips its own checks', async () => {
    const call = (step: number, metrics: string) => db.pool.query('SELECT ratchet_record_training_step($1, $2, 0, $3)', ['steps', step, metrics]);
    await expect(call(-1, '{}')).rejects.toMatchObject({ code: 'RV006' });
    await expect(call(9, '{"loss": "low"}')).rejects.toMatchObject({
      code: 'RV006',
      message: 'training step 9 of run steps: metric loss is "low", not a number',
    });
    await expect(call(9, '[1, 2]')).rejects.toMatchObject({ code: 'RV006' });
  });
});

describe('rewards by policy version', () => {
  it("groups completed trajectories by their first token's version, with the versions their tokens span and success by turn", async () => {
    expect(await rewardsByVersion(db.pool, 'steps')).toEqual([
      {
        version: 0,
        trajectories: 2,
        meanReward: -0.5,
        meanReturn: -1,
        anySuccess: 0.5,
        meanSpan: 0.5,
        maxSpan: 1,
        straddling: 0.5,
        meanOutputTokens: 0,
        truncatedShare: 0,
        contextExhausted: 0,
        byTurn: [
          { turn: 0, trajectories: 2, successRate: 0, meanReward: -1, truncatedShare: 0 },
          { turn: 1, trajectories: 2, successRate: 0.5, meanReward: 0, truncatedShare: 0 },
        ],
      },
      {
        version: 1,
        trajectories: 2,
        meanReward: 1 / 3,
        meanReturn: 0.5,
        anySuccess: 1,
        meanSpan: 1,
        maxSpan: 2,
        straddling: 0.5,
        meanOutputTokens: 0,
        truncatedShare: 0,
        contextExhausted: 0,
        byTurn: [
          { turn: 0, trajectories: 2, successRate: 0.5, meanReward: 0, truncatedShare: 0 },
          { turn: 1, trajectories: 1, successRate: 1, meanReward: 1, truncatedShare: 0 },
        ],
      },
      {
        version: 2,
        trajectories: 2,
        meanReward: 1,
        meanReturn: 1,
        anySuccess: 1,
        meanSpan: 0,
        maxSpan: 0,
        straddling: 0,
        meanOutputTokens: 0,
        truncatedShare: 0,
        contextExhausted: 0,
        byTurn: [{ turn: 0, trajectories: 2, successRate: 1, meanReward: 1, truncatedShare: 0 }],
      },
    ]);
  });

  it('has nothing for a run without completed trajectories', async () => {
    expect(await rewardsByVersion(db.pool, 'no-such-run')).toEqual([]);
  });
});

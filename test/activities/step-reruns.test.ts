import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuActivities, createGpuActivities } from '../../src/activities/index.js';
import type { EnvironmentStepInput } from '../../src/activities/environment-step.js';
import type { GenerateInput } from '../../src/activities/generate.js';
import { appendTurnCheckpoint } from '../../src/store/write/turn-checkpoints.js';
import { saveTurnOutput, saveVerdictAndFeedback, savePrompt } from '../../src/store/write/turn-store.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import type { TurnRecord } from '../../src/trajectory/turn.js';
import { VerifierPool, type Verdict, type VerifierOptions } from '../../src/verifier/index.js';
import { CodeSandboxPool } from '../../src/code/index.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { ScriptedBackend } from '../policy/fakes/scripted-backend.js';

let db: TestDatabase;
let tokenizer: ModelTokenizer;
const verifier = new (class CountingVerifier extends VerifierPool {
  checks = 0;
  override verify(gold: string | string[], output: string, options?: VerifierOptions): Promise<Verdict> {
    this.checks += 1;
    return super.verify(gold, output, options);
  }
})({ size: 1 });
const sandbox = new CodeSandboxPool();

beforeAll(async () => {
  [db, tokenizer] = await Promise.all([startTestDatabase(), loadModelTokenizer()]);
});

afterAll(async () => {
  await verifier.close();
  await db?.stop();
});

/** Runs one activity as attempt `n` would run, typed as the activity answers. */
function attempt(n: number) {
  return {
    run: <A, R>(activity: (input: A) => Promise<R>, input: A): Promise<R> =>
      new MockActivityEnvironment({ attempt: n }).run(activity, input) as Promise<R>,
  };
}

async function workingRows(trajectoryId: string): Promise<number> {
  const {
    rows: [row],
  } = await db.pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM trajectory_prompts WHERE trajectory_id = $1) + (SELECT count(*) FROM turn_outputs WHERE trajectory_id = $1)
          + (SELECT count(*) FROM turn_checkpoints WHERE trajectory_id = $1) AS n`,
    [trajectoryId],
  );
  return Number(row!.n);
}

/**
 * Runs a two-turn trajectory's steps once, in the workflow's order, keeping every step's input and answer: what a
 * workflow task re-run from an earlier point would call again.
 */
async function runTrajectory(trajectoryId: string) {
  const cpu = createCpuActivities({ pool: db.pool, tokenizer, verifier, sandbox });
  const backend = new ScriptedBackend([
    { ids: tokenizer.encode('2 + 2 = 5, so \\boxed{5}.'), weightVersion: 2 },
    { ids: tokenizer.encode('Sorry: 2 + 2 = \\boxed{4}.'), weightVersion: 2 },
  ]);
  const gpu = createGpuActivities({ pool: db.pool, backend, currentVersion: () => 2, heartbeatIntervalMs: 60_000 });
  const tokenizeInput = { trajectoryId, problem: 'What is 2 + 2?' };
  const tokenized = await attempt(1).run(cpu.tokenizePrompt, tokenizeInput);
  const steps: {
    generate: GenerateInput;
    generated: Awaited<ReturnType<typeof gpu.generate>>;
    judge: EnvironmentStepInput;
    judged: Awaited<ReturnType<typeof cpu.environmentStep>>;
  }[] = [];
  const turns: TurnRecord[] = [];
  let contextLen = tokenized.promptLen;
  for (let turn = 0; turn < 2; turn++) {
    const generate = { trajectoryId, turn, contextLen, maxNewTokens: 64, temperature: 1 };
    const generated = await attempt(1).run(gpu.generate, generate);
    const judge = { trajectoryId, turn, gold: ['4'], outputHadEos: true };
    const judged = await attempt(1).run(cpu.environmentStep, judge);
    steps.push({ generate, generated, judge, judged });
    turns.push({ turn, contextLen, ...generated, verdict: judged.status, success: judged.success, feedbackLen: judged.feedbackLen });
    contextLen += generated.outputLen + judged.feedbackLen;
  }
  const persistInput = {
    trajectoryId,
    qid: 'q-2+2',
    birthTime: 1_760_000_000_000,
    layout: 'seed' as const,
    endReason: 'turns' as const,
    turns,
    rewards: [0, 1],
    rawRewards: [-1, 1],
  };
  const persisted = await attempt(1).run(cpu.persistTrajectory, persistInput);
  return { cpu, gpu, backend, tokenizeInput, tokenized, steps, persistInput, persisted };
}

describe('every step of a trajectory, run again after later steps happened', () => {
  it('answers exactly as it first did once the trajectory is stored, and leaves no working row behind', async () => {
    const run = await runTrajectory('rerun/after-persist');
    expect(run.persisted).toEqual({ stored: true });
    expect(run.steps.map((step) => step.judged.status)).toEqual(['wrong', 'correct']);
    expect(await workingRows('rerun/after-persist')).toBe(0);
    const requests = run.backend.requests.length;
    const checks = verifier.checks;

    // The stall bug: the last turn's environment step and persist re-run after persist dropped the working rows.
    for (const step of [...run.steps].reverse()) {
      expect(await attempt(1).run(run.cpu.environmentStep, step.judge)).toEqual(step.judged);
      // A generate attempt that outlived its trajectory (its worker stalled) answers with the stored turn.
      expect(await attempt(3).run(run.gpu.generate, step.generate)).toEqual({ ...step.generated, resumedTokens: step.generated.outputLen });
      expect(await attempt(1).run(run.gpu.generate, step.generate)).toEqual({ ...step.generated, resumedTokens: step.generated.outputLen });
    }
    expect(await attempt(1).run(run.cpu.persistTrajectory, run.persistInput)).toEqual({ stored: false });
    expect(await attempt(2).run(run.cpu.tokenizePrompt, run.tokenizeInput)).toEqual(run.tokenized);
    expect(await attempt(1).run(run.cpu.checkRequest, { request: { trajectoryId: 'x' }, workflowId: 'x' })).toHaveProperty('invalid');

    // Nothing was generated or judged again, and no re-run wrote a working row.
    expect(run.backend.requests.length).toBe(requests);
    expect(verifier.checks).toBe(checks);
    expect(await workingRows('rerun/after-persist')).toBe(0);
    const { rows } = await db.pool.query('SELECT status, num_turns FROM trajectories WHERE trajectory_id = $1', ['rerun/after-persist']);
    expect(rows).toEqual([{ status: 'completed', num_turns: 2 }]);
  });

  it('a failure recorded after the trajectory was stored completed finds the completed row and changes nothing', async () => {
    const run = await runTrajectory('rerun/failure-after-persist');
    const recorded = await attempt(1).run(run.cpu.persistFailure, {
      trajectoryId: 'rerun/failure-after-persist',
      qid: 'q-2+2',
      birthTime: 1,
      layout: 'seed',
      turnsDone: 1,
      error: 'lost',
      failureType: 'ContextMismatch',
      failureClass: 'data' as const,
    });
    expect(recorded).toEqual({ stored: false, existing: 'completed' });
    const { rows } = await db.pool.query('SELECT status FROM trajectories WHERE trajectory_id = $1', ['rerun/failure-after-persist']);
    expect(rows).toEqual([{ status: 'completed' }]);
  });

  it('a step that finds its trajectory stored as failed fails typed, never answers completed', async () => {
    const cpu = createCpuActivities({ pool: db.pool, tokenizer, verifier, sandbox });
    const trajectoryId = 'rerun/failed';
    await attempt(1).run(cpu.tokenizePrompt, { trajectoryId, problem: 'What is 1 + 1?' });
    const failed = await attempt(1).run(cpu.persistFailure, {
      trajectoryId,
      qid: 'q',
      birthTime: 1,
      layout: 'seed',
      turnsDone: 0,
      error: 'the policy server is down',
      failureType: 'PolicyUnavailable',
      failureClass: 'infrastructure' as const,
    });
    expect(failed).toEqual({ stored: true });
    await expect(attempt(1).run(cpu.tokenizePrompt, { trajectoryId, problem: 'What is 1 + 1?' })).rejects.toThrow(/already stored as failed/);
    await expect(attempt(1).run(cpu.environmentStep, { trajectoryId, turn: 0, gold: ['2'], outputHadEos: true })).rejects.toThrow(
      /already stored as failed/,
    );
    const persist = attempt(1).run(cpu.persistTrajectory, {
      trajectoryId,
      qid: 'q',
      birthTime: 1,
      layout: 'seed',
      turns: [],
      rewards: [],
      rawRewards: [],
    });
    await expect(persist).rejects.toBeInstanceOf(ApplicationFailure);
    // A second failure record keeps the first one's type and class and says so, so the workflow fails as the row says.
    const again = await attempt(1).run(cpu.persistFailure, {
      trajectoryId,
      qid: 'q',
      birthTime: 1,
      layout: 'seed',
      turnsDone: 0,
      error: 'other',
      failureType: 'ContextMismatch',
      failureClass: 'data' as const,
    });
    expect(again).toEqual({ stored: false, existing: 'failed', failureType: 'PolicyUnavailable', failureClass: 'infrastructure' });
    expect(await workingRows(trajectoryId)).toBe(0);
  });
});

describe('two runs of one step at once (a stalled worker and its replacement)', () => {
  it('keep the judgement stored first: the second run answers with it, whatever it judged itself', async () => {
    const trajectoryId = 'rerun/two-judges';
    await savePrompt(db.pool, trajectoryId, [1, 2, 3], 'prompt');
    await saveTurnOutput(db.pool, {
      trajectoryId,
      turn: 0,
      attempt: 1,
      contextLen: 3,
      outputIds: [7, 8],
      outputLogprobs: [-1, -1],
      outputVersions: [0, 0],
      finishReason: 'stop',
      versionStart: 0,
      versionEnd: 0,
    });
    const first = await saveVerdictAndFeedback(
      db.pool,
      trajectoryId,
      0,
      { answerText: 'x', extracted: '1', status: 'timeout' },
      { ids: [5, 6, 7], text: 'wrong' },
    );
    const second = await saveVerdictAndFeedback(
      db.pool,
      trajectoryId,
      0,
      { answerText: 'x', extracted: '1', status: 'correct' },
      { ids: [9], text: 'right' },
    );
    expect(first).toEqual({ answerText: 'x', extracted: '1', status: 'timeout', feedbackLen: 3 });
    expect(second).toEqual(first);
  });

  it('a turn output or checkpoint written after the trajectory was stored is not kept', async () => {
    const run = await runTrajectory('rerun/late-writes');
    const late = {
      trajectoryId: 'rerun/late-writes',
      turn: 1,
      attempt: 9,
      contextLen: run.steps[1]!.generate.contextLen,
      outputIds: [1],
      outputLogprobs: [-1],
      outputVersions: [2],
      finishReason: 'stop' as const,
      versionStart: 2,
      versionEnd: 2,
    };
    expect(await saveTurnOutput(db.pool, late)).toBe(false);
    expect(
      await appendTurnCheckpoint(db.pool, { trajectoryId: 'rerun/late-writes', turn: 1, attempt: 9 }, 0, { ids: [1], logprobs: [-1], versions: [2] }),
    ).toBe(false);
    expect(await workingRows('rerun/late-writes')).toBe(0);
  });
});

import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateActivity } from '../../src/activities/generate.js';
import type { ServedLogprobs } from '../../src/policy/logprob-verdict.js';
import { savePrompt } from '../../src/store/write/turn-store.js';
import { failureClassOf } from '../../src/trajectory/failure.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { ScriptedBackend } from '../policy/fakes/scripted-backend.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await startTestDatabase();
});
afterAll(async () => {
  await db?.stop();
});

/** Answers every request with four tokens and keeps what it was asked. */
function recordingBackend(): ScriptedBackend {
  return new ScriptedBackend([{ ids: [7, 8, 9, 10], logprob: -0.25 }], 'vllm');
}

const processed: ServedLogprobs = { temperature: 'applied', truncation: 'applied', evidence: 'gaps ×4' };
const raw: ServedLogprobs = { temperature: 'ignored', truncation: 'ignored', evidence: 'gaps ×1' };

async function turn(trajectoryId: string) {
  return { trajectoryId, turn: 0, contextLen: (await savePrompt(db.pool, trajectoryId, [1, 2, 3], 'What is 2+2?'))!, maxNewTokens: 16 };
}

describe('generate and its sampling', () => {
  it("sends the workflow's sampling to the server in full", async () => {
    const backend = recordingBackend();
    const sampling = { temperature: 0.7, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1.1 };
    const generate = generateActivity(
      db.pool,
      backend,
      () => 0,
      60_000,
      async () => processed,
    );
    await new MockActivityEnvironment().run(generate, { ...(await turn('sampling/full')), temperature: 0.7, sampling });
    expect(backend.requests.map((r) => r.sampling)).toEqual([sampling]);
  });

  it("takes an earlier release's temperature-only input as that temperature with the seed's other parameters", async () => {
    const backend = recordingBackend();
    const generate = generateActivity(
      db.pool,
      backend,
      () => 0,
      60_000,
      async () => processed,
    );
    await new MockActivityEnvironment().run(generate, { ...(await turn('sampling/legacy')), temperature: 0.6 });
    expect(backend.requests.map((r) => r.sampling)).toEqual([{ ...DEFAULT_SAMPLING, temperature: 0.6 }]);
  });

  it('refuses T = 0.7 on a raw-logprobs server, typed and not retryable, before asking the server anything', async () => {
    const backend = recordingBackend();
    const generate = generateActivity(
      db.pool,
      backend,
      () => 0,
      60_000,
      async () => raw,
    );
    const input = { ...(await turn('sampling/refused')), temperature: 0.7, sampling: { ...DEFAULT_SAMPLING, temperature: 0.7 } };
    const failure = await new MockActivityEnvironment().run(generate, input).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'RawLogprobsServer', nonRetryable: true });
    expect((failure as Error).message).toMatch(/refused a request sampled at temperature 0.7.*--logprobs-mode processed_logprobs/);
    expect(backend.requests).toHaveLength(0);
    const { rowCount } = await db.pool.query('SELECT 1 FROM turn_checkpoints WHERE trajectory_id = $1', ['sampling/refused']);
    expect(rowCount).toBe(0);
  });

  it("serves the seed's sampling from a raw server without waiting for the probe", async () => {
    const backend = recordingBackend();
    const never = () => new Promise<ServedLogprobs>(() => undefined);
    const generate = generateActivity(db.pool, backend, () => 0, 60_000, never);
    const result = await new MockActivityEnvironment().run(generate, {
      ...(await turn('sampling/seed')),
      temperature: 1,
      sampling: DEFAULT_SAMPLING,
    });
    expect(result).toMatchObject({ outputLen: 4, finishReason: 'stop' });
  });

  it('counts the refusal as infrastructure: the server, not the data, is at fault', () => {
    expect(failureClassOf('RawLogprobsServer')).toBe('infrastructure');
  });
});

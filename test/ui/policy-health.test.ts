import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { policyHealth } from '../../src/store/read/policy-health.js';
import { storeCompletedTrajectory, type CompletedTrajectory } from '../../src/store/write/trajectory-store.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';
import { packTrajectory, type TurnTokens } from '../../src/trajectory/packing.js';
import { startRatchetUi } from '../../src/ui/server.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

// The behaviour policy's mean logprob per version (issue 35), from the stored token arrays, worked out by hand: each
// generated token counts once, under the version that generated it, whatever the packing layout.
let db: TestDatabase;

function stored(id: string, layout: 'seed' | 'concat', turns: TurnTokens[], sampling = DEFAULT_SAMPLING, finishedOrder = 0): CompletedTrajectory {
  const promptIds = [1, 2, 3];
  return {
    trajectoryId: id,
    qid: 'q',
    birthTime: 1_730_000_000_000 + finishedOrder,
    layout,
    endReason: 'turns',
    promptIds,
    packed: packTrajectory(promptIds, turns, layout),
    turns: turns.map((t, turn) => ({
      turn,
      contextLen: 3,
      outputLen: t.outputIds.length,
      finishReason: 'stop',
      versionStart: t.outputVersions[0]!,
      versionEnd: t.outputVersions.at(-1)!,
      verdict: 'wrong',
      success: false,
      feedbackLen: t.feedbackIds.length,
    })),
    rewards: turns.map(() => -1),
    rawRewards: turns.map(() => -1),
    texts: [],
    sampling,
  };
}

const turn = (logprobs: number[], versions: number[], feedback: number[] = []): TurnTokens => ({
  outputIds: logprobs.map((_, i) => 10 + i),
  outputLogprobs: logprobs,
  outputVersions: versions,
  feedbackIds: feedback,
  noEos: false,
});

beforeAll(async () => {
  db = await startTestDatabase();
  // Version 0: −0.5, −1.5 (turn 1), −1 (turn 2's first token); version 1: −2, −3 (turn 2), −0.25 (a concat trajectory).
  await storeCompletedTrajectory(db.pool, stored('health/q/0', 'seed', [turn([-0.5, -1.5], [0, 0], [7, 8]), turn([-1, -2, -3], [0, 1, 1])]));
  await storeCompletedTrajectory(db.pool, stored('health/q/1', 'concat', [turn([-0.25], [1])]));
  // Another run sampled at temperature 0.7: −mean logprob estimates no entropy there.
  await storeCompletedTrajectory(db.pool, stored('cooled/q/0', 'seed', [turn([-0.1, -0.3], [2, 2])], { ...DEFAULT_SAMPLING, temperature: 0.7 }));
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

describe('the behaviour policy per version', () => {
  it('gives the mean logprob of the tokens each version sampled, and −mean logprob as the entropy estimate under plain sampling', async () => {
    const health = await policyHealth(db.pool, 'health');
    expect(health).toMatchObject({ trajectories: 2, plainSampling: true });
    expect(
      health.byVersion.map((v) => [
        v.version,
        v.tokens,
        +v.meanLogprob.toFixed(6),
        v.entropyEstimate === null ? null : +v.entropyEstimate.toFixed(6),
      ]),
    ).toEqual([
      [0, 3, -1, 1],
      [1, 3, -1.75, 1.75],
    ]);
  });

  it("shows no entropy estimate where sampling was not the policy's own distribution, and says why, on its page", async () => {
    const health = await policyHealth(db.pool, 'cooled');
    expect(health.plainSampling).toBe(false);
    expect(health.byVersion).toEqual([{ version: 2, tokens: 2, meanLogprob: expect.closeTo(-0.2, 6), entropyEstimate: null }]);
    const ui = await startRatchetUi({ pool: db.pool, tokenizer: await loadModelTokenizer(), port: 0 });
    try {
      const cooled = await (await fetch(`${ui.url}/runs/cooled/policy`)).text();
      expect(cooled).toContain('not all sampled from the policy');
      expect(cooled).toMatch(/data-version="2"[\s\S]*?-0\.2000[\s\S]*?<td class="num entropy">–/);
      const plain = await (await fetch(`${ui.url}/runs/health/policy`)).text();
      expect(plain).toContain('Monte-Carlo estimate of the per-token entropy');
      expect(plain).toMatch(/data-version="1"[\s\S]*?-1\.7500[\s\S]*?1\.7500/);
      expect((await fetch(`${ui.url}/runs/healht/policy`)).status).toBe(404);
      expect(await (await fetch(`${ui.url}/runs/health`)).text()).toContain('href="/runs/health/policy"');
    } finally {
      await ui.close();
    }
  });
});

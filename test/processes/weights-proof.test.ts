import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferenceBackend } from '../../src/policy/inference-backend.js';
import { PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { CheckpointRefused, judgeProbe, type ProbeReference, probeReference } from '../../src/policy/weights-proof.js';
import { PolicyVersionWatcher } from '../../src/processes/policy-version-watcher.js';
import { InvalidProbeReference, publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { servedWeights, serversNow } from '../../src/store/write/served-weights.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

// The watcher's proof, gate and roll-back against a server whose "weights" are a table of logprobs per checkpoint
// path: what it serves after a load is what the test says the load did (the real vLLM cases, a tied head among them,
// are test/real-servers/weights-proof.real.ts).
const IDS = [5, 9, 2, 7, 1, 8, 3, 6, 4, 0];
const weights = (shift: number): (number | null)[] => IDS.map((_, i) => (i === 0 ? null : -2 - shift - i / 10));
const reference = (shift: number): ProbeReference => ({ token_ids: IDS, logprobs: weights(shift) });

class TableServer implements InferenceBackend {
  readonly kind = 'vllm' as const;
  readonly url: string;
  served: (number | null)[] = weights(0);
  loads: string[] = [];
  /** What a load of each path serves (absent: the checkpoint is refused before loading). */
  constructor(
    name: string,
    readonly table: Record<string, (number | null)[] | 'refuse' | 'break'>,
  ) {
    this.url = `http://${name}`;
  }
  async updateWeights(_version: number, path?: string): Promise<void> {
    this.loads.push(path ?? '(own)');
    const loaded = this.table[path ?? ''];
    if (loaded === 'refuse' || loaded === undefined) throw new CheckpointRefused(this.url, `${path}: no such checkpoint`);
    if (loaded === 'break') {
      this.served = IDS.map(() => null);
      throw new PolicyUnavailable(this.url, 'engine died');
    }
    this.served = loaded;
  }
  async scorePrompt(): Promise<(number | null)[]> {
    return this.served;
  }
  async servesWeights(): Promise<boolean> {
    return true;
  }
  async servedWeightVersion(): Promise<string | undefined> {
    return undefined;
  }
  generate = async () => ({ finishReason: 'stop' as const });
  topLogprobs = async () => [];
  abort = async () => undefined;
  health = async () => true;
  contextWindow = async () => 1_000;
}

let db: TestDatabase;
let version = 0;
beforeAll(async () => {
  db = await startTestDatabase();
});
afterAll(async () => {
  await db?.stop();
});

const until = (condition: () => Promise<boolean>, what: string) =>
  pollUntil(condition, { what, timeoutMs: 10_000, intervalMs: 20, fatal: () => true });
const verdictOf = async (server: string, v: number) => {
  await until(
    async () => (await servedWeights(db.pool, { version: v })).some((row) => row.server === server && row.verdict !== 'loading'),
    `verdict on ${v}`,
  );
  return (await servedWeights(db.pool, { version: v })).find((row) => row.server === server)!;
};

describe('judgeProbe', () => {
  it('proves within the bounds and names the figures either way', () => {
    expect(judgeProbe(reference(0), weights(0))).toMatchObject({ proven: true, figures: { tokens: 9, meanAbsDelta: 0, maxAbsDelta: 0 } });
    const off = judgeProbe(reference(0), weights(0.5));
    expect(off).toMatchObject({ proven: false, figures: { meanAbsDelta: expect.closeTo(0.5, 6) } });
    expect(judgeProbe(reference(0), weights(0).slice(1)).proven).toBe(false);
    expect(judgeProbe(reference(0), [...weights(0).slice(0, 4), null, ...weights(0).slice(5)]).proven).toBe(false);
    // One position far off fails even when the mean is small: a few rows of a head can be stale.
    const spiked = weights(0);
    spiked[3] = spiked[3]! - 1;
    expect(judgeProbe(reference(0), spiked).proven).toBe(false);
  });

  it('accepts only a well-formed reference', async () => {
    expect(probeReference.safeParse(reference(0)).success).toBe(true);
    expect(probeReference.safeParse({ token_ids: IDS, logprobs: weights(0).slice(1) }).success).toBe(false);
    expect(probeReference.safeParse({ token_ids: IDS, logprobs: [null, null, ...weights(0).slice(2)] }).success).toBe(false);
    expect(probeReference.safeParse({ token_ids: IDS, logprobs: [null, 0.5, ...weights(0).slice(2)] }).success).toBe(false);
    await expect(publishPolicyVersion(db.pool, 999, '/w', { token_ids: [1] })).rejects.toBeInstanceOf(InvalidProbeReference);
  });
});

describe('a GPU worker proving every load', () => {
  it('moves the tag only once the probe matches, refuses a miss and a refused checkpoint, and rolls the server back, proven', async () => {
    const server = new TableServer('proving', { '/v1': weights(1), '/hybrid': weights(1.3), '/v3': weights(3) });
    const watcher = new PolicyVersionWatcher(db.pool, db.url, server, { pollMs: 50 });
    await watcher.start();
    try {
      const v1 = ++version;
      await publishPolicyVersion(db.pool, v1, '/v1', reference(1));
      expect((await verdictOf(server.url, v1)).verdict).toBe('proven');
      expect(await watcher.current()).toBe(v1);

      const hybrid = ++version;
      await publishPolicyVersion(db.pool, hybrid, '/hybrid', reference(2));
      const refused = await verdictOf(server.url, hybrid);
      expect(refused).toMatchObject({ verdict: 'refused', errorType: 'WeightsMismatch' });
      expect(refused.meanAbsDelta).toBeCloseTo(0.7, 6);
      expect(await watcher.current()).toBe(v1);
      expect(server.served).toEqual(weights(1)); // reloaded /v1 and proven again
      expect(server.loads.slice(-2)).toEqual(['/hybrid', '/v1']);

      const missing = ++version;
      await publishPolicyVersion(db.pool, missing, '/missing', reference(4));
      expect(await verdictOf(server.url, missing)).toMatchObject({ verdict: 'refused', errorType: 'CheckpointRefused' });
      expect(server.loads.at(-1)).toBe('/missing'); // refused before loading: nothing to roll back
      expect(await watcher.current()).toBe(v1);

      const unreferenced = ++version;
      const loads = server.loads.length;
      await publishPolicyVersion(db.pool, unreferenced, '/v3');
      expect(await verdictOf(server.url, unreferenced)).toMatchObject({ verdict: 'refused', errorType: 'WeightsUnproven' });
      expect(server.loads).toHaveLength(loads); // never loaded: it could not have been proven
      expect((await serversNow(db.pool)).find((row) => row.server === server.url)?.version).toBe(v1);
    } finally {
      await watcher.stop();
    }
  });

  it('holds generation at the gate while a load is proven, and fails it over when the server cannot be put back', async () => {
    const server = new TableServer('breaking', { '/v1': weights(1), '/broken': 'break' });
    const watcher = new PolicyVersionWatcher(db.pool, db.url, server, { pollMs: 50 });
    let release!: () => void;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const load = server.updateWeights.bind(server);
    server.updateWeights = async (v, path) => {
      if (path === '/v1') await slow;
      return load(v, path);
    };
    await watcher.start();
    try {
      const v1 = ++version;
      await publishPolicyVersion(db.pool, v1, '/v1', reference(1));
      await until(async () => {
        const now = watcher.current();
        if (now instanceof Promise) void now.catch(() => undefined); // only looked at here
        return now instanceof Promise;
      }, 'the gate closed');
      const waiting = watcher.current();
      release();
      expect(await waiting).toBe(v1);

      // A load that breaks the server, and a server that cannot be put back on /v1 either.
      server.table['/v1'] = 'break';
      const broken = ++version;
      await publishPolicyVersion(db.pool, broken, '/broken', reference(5));
      await until(async () => !watcher.usable(), 'the server marked unusable');
      await expect(watcher.current()).rejects.toBeInstanceOf(PolicyUnavailable);
      expect((await serversNow(db.pool)).find((row) => row.server === server.url)?.version).toBeNull();
    } finally {
      await watcher.stop();
    }
  });
});

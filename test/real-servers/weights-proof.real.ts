import { cp, mkdtemp, open, rm, stat, truncate } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateResumable } from '../../src/policy/resumable-generation.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { judgeProbe, PROOF_BOUNDS, type ProbeReference } from '../../src/policy/weights-proof.js';
import { PolicyVersionWatcher } from '../../src/processes/policy-version-watcher.js';
import { PEAKED_MODEL, POLICY_MODELS, startVllm, stopStartedServers, type RunningVllm } from '../../src/stack/vllm-server.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { servedWeights, serversNow } from '../../src/store/write/served-weights.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { DEFAULT_SAMPLING, samplingOf } from '../../src/trajectory/sampling.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { publisherReference } from './publisher-reference.js';

// Issue 33: a tied model (Qwen3-0.6B's shape: the output head is the input embedding) reloaded in place must serve
// exactly the published weights, and every load is proven before a token carries its version. The servers compute in
// float32: there vLLM 0.32's CPU head multiplies through a oneDNN copy of the weight made at start-up, which its own
// reload_weights never rebuilds for a tied head (bf16 on an AVX2 machine multiplies the tensor itself and hides it).
const [V0, V1] = POLICY_MODELS as [string, string];
const reference = (weights: string, ids?: number[]) => publisherReference(weights, { dtype: 'float32', ...(ids ? { ids } : {}) });

let db: TestDatabase;
let withExtension: RunningVllm;
let withoutExtension: RunningVllm;
let refV0: ProbeReference;
let refV1: ProbeReference;
let scratch: string;
let published = 0;

beforeAll(async () => {
  // Both servers start together: one on v0 with Ratchet's reload extension, one cold on v1 with vLLM's own reload.
  [withExtension, withoutExtension, refV0, refV1, db] = await Promise.all([
    startVllm({ model: V0, dtype: 'float32' }),
    startVllm({ model: V1, dtype: 'float32', workerExtension: null }),
    reference(V0),
    reference(V1),
    startTestDatabase(),
  ]);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ratchet-weights-'));
});
afterAll(async () => {
  await stopStartedServers();
  await db?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const until = (condition: () => boolean | Promise<boolean>, what: string) =>
  pollUntil(condition, { what, timeoutMs: 60_000, intervalMs: 100, fatal: () => true });

async function publish(weights: string | undefined, ref?: ProbeReference): Promise<number> {
  published += 1;
  await publishPolicyVersion(db.pool, published, weights, ref);
  return published;
}

async function decided(server: string, version: number) {
  await until(
    async () => (await servedWeights(db.pool, { version })).some((row) => row.server === server && row.verdict !== 'loading'),
    `a verdict on version ${version}`,
  );
  return (await servedWeights(db.pool, { version })).find((row) => row.server === server)!;
}

/** The server's probe against a reference, as the worker computes it. */
async function probe(backend: VllmBackend, ref: ProbeReference) {
  return judgeProbe(ref, await backend.scorePrompt(ref.token_ids));
}

async function greedy(backend: VllmBackend, ids: number[]) {
  const out = { ids: [] as number[], logprobs: [] as number[] };
  await backend.generate(
    { inputIds: ids, maxNewTokens: 24, sampling: samplingOf({ temperature: 0 }), requestId: `greedy-${Date.now()}-${Math.random()}` },
    (chunk) => {
      out.ids.push(...chunk.ids);
      out.logprobs.push(...chunk.logprobs);
    },
  );
  return out;
}

describe('a tied model reloaded in place (real vLLM, float32)', () => {
  it("vLLM's own reload serves a hybrid (new body, start-up head) and the probe refuses it; the server goes back to its start-up weights, proven", async () => {
    const backend = new VllmBackend(withoutExtension.url);
    expect((await probe(backend, refV1)).proven).toBe(true);
    const watcher = new PolicyVersionWatcher(db.pool, db.url, backend, { pollMs: 200 });
    await watcher.start();
    try {
      const version = await publish(V0, refV0);
      const row = await decided(backend.url, version);
      expect(row.verdict).toBe('refused');
      expect(row.errorType).toBe('WeightsMismatch');
      // The hybrid is neither version: far from v0's reference (what was published) ...
      expect(row.meanAbsDelta!).toBeGreaterThan(PROOF_BOUNDS.meanAbsDelta * 5);
      await until(
        async () => (await serversNow(db.pool)).some((server) => server.server === backend.url && server.version === 0),
        'back on version 0',
      );
      expect(await watcher.current()).toBe(0);
      // ... and the start-up weights are what the server serves again.
      expect((await probe(backend, refV1)).proven).toBe(true);
      expect(watcher.usable()).toBe(true);
    } finally {
      await watcher.stop();
    }
  });

  it("Ratchet's reload serves exactly the published weights: the probe proves it, and greedy tokens and logprobs equal a server started cold on them", async () => {
    const backend = new VllmBackend(withExtension.url);
    const cold = new VllmBackend(withoutExtension.url);
    const watcher = new PolicyVersionWatcher(db.pool, db.url, backend, { pollMs: 200 });
    await watcher.start();
    try {
      const version = await publish(V1, refV1);
      const row = await decided(backend.url, version);
      expect(row).toMatchObject({ verdict: 'proven', errorType: null });
      expect(row.meanAbsDelta!).toBeLessThan(PROOF_BOUNDS.meanAbsDelta);
      expect(row.loadedAt).not.toBeNull();
      expect(await watcher.current()).toBe(version);
      const prompt = [151644, 872, 198, 3838, 374, 220, 21, 353, 220, 22, 30, 151645, 198, 151644, 77091, 198];
      const [reloaded, started] = [await greedy(backend, prompt), await greedy(cold, prompt)];
      expect(reloaded.ids).toEqual(started.ids);
      for (let i = 0; i < reloaded.logprobs.length; i++) expect(Math.abs(reloaded.logprobs[i]! - started.logprobs[i]!)).toBeLessThan(1e-3);

      // The held-out check a trainer makes: tokens sampled at T = 1 after the reload, recomputed with the published weights.
      const sampled: number[] = [];
      const logprobs: number[] = [];
      await backend.generate(
        { inputIds: prompt, maxNewTokens: 64, sampling: { ...DEFAULT_SAMPLING, temperature: 1 }, requestId: `heldout-${Date.now()}` },
        (chunk) => {
          sampled.push(...chunk.ids);
          logprobs.push(...chunk.logprobs);
        },
      );
      const recomputed = await reference(V1, [...prompt, ...sampled]);
      const deltas = logprobs.map((logprob, i) => Math.abs(logprob - recomputed.logprobs[prompt.length + i]!));
      const mean = deltas.reduce((a, b) => a + b, 0) / deltas.length;
      console.log(
        `held-out check after the reload: mean |Δ| ${mean.toExponential(2)}, max ${Math.max(...deltas).toExponential(2)} over ${deltas.length} tokens; probe ${row.meanAbsDelta} / ${row.maxAbsDelta}`,
      );
      expect(mean).toBeLessThan(0.02);
    } finally {
      await watcher.stop();
    }
  });

  it('refuses every bad publish without taking the server down or tagging a token with it, and keeps serving the version it had', async () => {
    const backend = new VllmBackend(withExtension.url);
    const watcher = new PolicyVersionWatcher(db.pool, db.url, backend, { pollMs: 200 });
    await watcher.start();
    try {
      const good = await publish(V1, refV1);
      expect((await decided(backend.url, good)).verdict).toBe('proven');

      const truncated = path.join(scratch, 'truncated');
      await cp(V1, truncated, { recursive: true });
      const shard = path.join(truncated, 'model.safetensors');
      await truncate(shard, Math.floor((await stat(shard)).size / 2));
      const flipped = path.join(scratch, 'flipped');
      await cp(V1, flipped, { recursive: true });
      await corruptMiddle(path.join(flipped, 'model.safetensors'));
      const untied = path.join(scratch, 'untied');
      await cp(PEAKED_MODEL, untied, { recursive: true });

      // A generation in flight across the bad publishes: it is aborted by each reload, waits while the load is
      // proven, and resumes under the version the server is shown to serve, never under a refused one.
      const inFlight = generateResumable(
        backend,
        {
          context: [151644, 872, 198],
          maxNewTokens: 600,
          sampling: DEFAULT_SAMPLING,
          requestId: `inflight-${Date.now()}`,
        },
        { ids: [], logprobs: [], versions: [] },
        watcher.current,
        () => undefined,
      );

      const cases: [string, string | undefined, ProbeReference | undefined, string][] = [
        ['an unreadable path', '/nonexistent/checkpoint', refV1, 'CheckpointRefused'],
        ['a truncated shard', truncated, refV1, 'CheckpointRefused'],
        ['another architecture (untied head)', untied, refV1, 'CheckpointRefused'],
        // Overwritten bytes make logprobs off or not finite at all (vLLM then cannot answer the probe): refused either way.
        ['a corrupted shard of the right size', flipped, refV1, 'WeightsMismatch|ProbeFailed'],
        ['weights published without a reference', V0, undefined, 'WeightsUnproven'],
      ];
      for (const [what, weights, ref, errorType] of cases) {
        const version = await publish(weights, ref);
        const row = await decided(backend.url, version);
        expect(row.verdict, what).toBe('refused');
        expect(errorType.split('|'), what).toContain(row.errorType);
        expect(await watcher.current(), what).toBe(good);
        expect((await probe(backend, refV1)).proven, what).toBe(true);
        expect(await backend.health(), what).toBe(true);
      }
      const { output } = await inFlight;
      expect(output.ids.length).toBeGreaterThan(0);
      expect(new Set(output.versions)).toEqual(new Set([good]));
      expect((await serversNow(db.pool)).find((server) => server.server === backend.url)?.version).toBe(good);
    } finally {
      await watcher.stop();
    }
  });
});

/** Overwrites 64 KiB in the middle of the file's tensor data: the header and the length stay right. */
async function corruptMiddle(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    const { size } = await handle.stat();
    await handle.write(Buffer.alloc(65_536, 0x7f), 0, 65_536, Math.floor(size / 2));
  } finally {
    await handle.close();
  }
}

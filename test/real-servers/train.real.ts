import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { checkRunRows } from '../../scripts/demo-train/run-rows.js';
import { runTrainer, type TrainerEvent } from '../../scripts/demo-train/trainer-process.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { startVllm, stopStartedServers, type RunningVllm } from '../../src/stack/vllm-server.js';
import { servedWeights } from '../../src/store/write/served-weights.js';

// The short version of `npm run demo:train`: the PyTorch trainer of examples/train against a real vLLM, for a few
// steps. What it proves is the loop, not the learning: each step's new version is written, published, and loaded
// into vLLM while trajectories run; the trainer's recomputed logprobs match the stored behaviour logprobs at
// every step; every stored row keeps the seed's invariants.
const STEPS = 4;
const ETA = 1;

let stack: TestStack;
let vllm: RunningVllm;
let models: string;
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  models = await mkdtemp(path.join(os.tmpdir(), 'ratchet-train-'));
  // No warm-up: random weights answer with 8 random tokens a turn, which is all the loop needs.
  // Tied embeddings (Qwen3-0.6B's shape), the case vLLM's own reload gets wrong: every version is proven in the ledger.
  await runTrainer(['prepare', '--out', models, '--warmup-steps', '0', '--tied'], {}).done;
  stack = await startTestStack();
  vllm = await startVllm({ model: path.join(models, 'v0000'), dtype: 'float32' });
  stops.push(await stack.startWorkers({ gpu: false }));
  stops.push(await stack.startWorkers({ cpu: false, backend: new VllmBackend(vllm.url) }));
  stops.push(await stack.startController());
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stopStartedServers();
  await stack?.stop();
  if (models) await rm(models, { recursive: true, force: true });
});

describe('the PyTorch trainer against a real vLLM', () => {
  it('publishes a version per step that vLLM loads mid-run, with parity at every step and valid rows', { timeout: 480_000 }, async () => {
    const runId = 'train-ci';
    const events = await runTrainer(
      [
        'train',
        '--models',
        models,
        '--vllm-url',
        vllm.url,
        '--run',
        runId,
        '--steps',
        String(STEPS),
        '--eta',
        String(ETA),
        '--batch-size',
        '2',
        '--samples',
        '4',
        '--turns',
        '2',
        '--temperature',
        '0.8',
      ],
      { TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl },
    ).done;
    const steps = events.filter((e) => e.event === 'step');
    const done = events.at(-1) as TrainerEvent;
    console.log(`train.real: ${JSON.stringify(done)}`);

    expect(steps).toHaveLength(STEPS);
    for (const step of steps) {
      expect(step.parity_tokens).toBeGreaterThan(0);
      expect(step.parity_mean_abs).toBeLessThanOrEqual(0.02);
      expect(step.parity_p99_abs).toBeLessThanOrEqual(0.1);
    }
    expect(done.published).toBe(STEPS);
    // vLLM reported each of at least three new versions while the run was going, and generated tokens with them.
    expect(done.reloaded).toBeGreaterThanOrEqual(3);
    const generatedWith = new Set(steps.flatMap((s) => s.token_versions as number[]));
    expect([...generatedWith].filter((v) => v > 0).length).toBeGreaterThanOrEqual(2);

    // Every version the server loaded was proven against the reference the trainer computed from its model in memory
    // (a tied model: vLLM's own reload would serve it as a hybrid, see weights-proof.real.ts).
    const ledger = await servedWeights(stack.pool);
    expect(ledger.length).toBeGreaterThanOrEqual(3);
    for (const row of ledger) {
      expect(row.verdict, `version ${row.version}: ${row.errorType} ${row.error}`).toBe('proven');
      expect(row.meanAbsDelta!).toBeLessThanOrEqual(0.02);
    }

    const rows = await checkRunRows(stack.pool, stack.tokenizer, runId);
    expect(rows.failures).toEqual([]);
    expect(rows.valid).toBe(rows.rows);
    expect(rows.rows).toBeGreaterThanOrEqual(STEPS * 2 * 4);
  });
});

import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeServedLogprobs } from '../../src/policy/logprob-probe.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import type { RolloutOptions } from '../../src/trajectory/options.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { expectSeedInvariants } from '../../scripts/support/seed-invariants.js';
import { describeParity, exportFile, exportFolder, runParity, samplingLabel, type ExportFormat } from './parity-command.js';
import { judgeProbe } from '../../src/policy/weights-proof.js';
import {
  PEAKED_MODEL,
  PEAKED_MODEL_V1,
  POLICY_MODELS,
  startVllm,
  stopStartedServers,
  VLLM_PYTHON,
  type RunningVllm,
} from '../../src/stack/vllm-server.js';
import { publisherReference } from './publisher-reference.js';

// The bounds, in float32: what `ratchet-parity --max-mean 0.02 --max-p99 0.1` enforces.
const BOUNDS = ['--max-mean', '0.02', '--max-p99', '0.1'];

// Each sampling in its own export format, so the command reads all three.
const SAMPLINGS: { name: string; options: Partial<RolloutOptions>; format: ExportFormat }[] = [
  { name: 't1', options: { temperature: 1 }, format: 'jsonl' },
  { name: 't07', options: { temperature: 0.7 }, format: 'parquet' },
  { name: 'topp09', options: { topP: 0.9 }, format: 'arrow' },
  { name: 'mixed', options: { temperature: 0.8, topP: 0.95, topK: 50, minP: 0.02, repetitionPenalty: 1.2 }, format: 'jsonl' },
];

let stack: TestStack;
let vllm: RunningVllm;
let stopWorkers: () => Promise<void>;
let scratch: string;
const rows = new Map<string, ExportedTrajectory[]>();

// One Temporal + Postgres and one float32 vLLM serving the peaked model for the file; every sampling's trajectories
// are generated together, then checked by one run of the command over one export file per sampling.
beforeAll(async () => {
  scratch = await exportFolder();
  stack = await startTestStack();
  vllm = await startVllm({ model: PEAKED_MODEL, dtype: 'float32' });
  // The GPU worker's start-up probe finds the processed logprobs the project starts vLLM for.
  expect(await probeServedLogprobs(new VllmBackend(vllm.url))).toMatchObject({ temperature: 'applied', truncation: 'applied' });
  stopWorkers = await stack.startWorkers({ backend: new VllmBackend(vllm.url) });
  const problems = stack.problems.slice(0, 4);
  const requests = SAMPLINGS.flatMap(({ name, options }) => trajectoryRequests(name, problems, 1, { turns: 2, maxNewTokens: 48, ...options }));
  const results = await runRollouts(stack.client, requests);
  expect(results.map((r) => r.status)).toEqual(requests.map(() => 'completed'));
  for (const { name } of SAMPLINGS) rows.set(name, await stack.exported(`${name}/`));
});

afterAll(async () => {
  await stopWorkers?.();
  await vllm?.stop();
  await stopStartedServers();
  await stack?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('ratchet-parity against a real vLLM (peaked tiny Qwen3, float32)', () => {
  it('recomputes the stored logprobs of every sampling within mean |Δ| 0.02 and p99 0.1, from JSON lines, Parquet and Arrow', async () => {
    const exports: string[] = [];
    for (const { name, format } of SAMPLINGS) {
      for (const row of rows.get(name)!) expectSeedInvariants(row, stack.tokenizer);
      exports.push('--export', await exportFile(scratch, rows.get(name)!, format));
    }
    const { code, report } = await runParity(['--model', PEAKED_MODEL, ...exports, ...BOUNDS]);
    for (const { name, options } of SAMPLINGS) {
      const label = samplingLabel(options);
      const [stats, raw] = [report.by_sampling[label], report.raw_by_sampling[label]];
      console.log(describeParity(`${name} ${JSON.stringify(options)}`, stats, raw));
      expect(stats!.tokens).toBeGreaterThan(200);
      expect(stats!.mean_abs).toBeLessThanOrEqual(0.02);
      expect(stats!.p99_abs).toBeLessThanOrEqual(0.1);
      // Away from the seed's sampling the raw distribution is far off: the model is peaked enough to tell them
      // apart (top-p 0.9 alone moves a token by -log(kept mass), at most log(1/0.9) = 0.105).
      if (name !== 't1') expect(raw!.mean_abs).toBeGreaterThan(name === 'topp09' ? 0.05 : 0.3);
    }
    expect(report.failures).toEqual([]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ rows: SAMPLINGS.length * 4, unchecked_tokens: {}, rows_without_sampling: 0, outside_support: 0 });
    expect(Object.keys(report.by_version)).toEqual(['0']);
  });

  it('fails on rows checked against the wrong weights, and when no token can be checked', async () => {
    const tempered = await exportFile(scratch, rows.get('t07')!, 'jsonl');
    const wrongModel = await runParity(['--model', POLICY_MODELS[0]!, '--export', tempered, ...BOUNDS]);
    console.log(describeParity('t07 against policy-v0', wrongModel.report.overall, wrongModel.report.raw));
    expect(wrongModel.code).toBe(1);
    expect(wrongModel.report.failures.join('; ')).toMatch(/mean \|Δ\| .* > 0\.02; p99 \|Δ\| .* > 0\.1/);

    const noModel = await runParity(['--model-version', `7=${PEAKED_MODEL}`, '--export', tempered, ...BOUNDS]);
    expect(noModel.code).toBe(1);
    expect(noModel.report.overall).toBeNull();
    expect(Object.keys(noModel.report.unchecked_tokens)).toEqual(['0']);
    expect(noModel.report.failures).toEqual(['no generated token was checked']);
  });

  it("computes vLLM's processed logprobs exactly: the same logits through vLLM's sampler and processed_logprobs", async () => {
    const { stdout } = await promisify(execFile)(VLLM_PYTHON, [path.join(import.meta.dirname, 'processed_logprobs_check.py')], {
      env: { ...process.env, HF_HUB_OFFLINE: '1' },
    });
    const checked = JSON.parse(stdout) as { samplings: number; max_abs: number; mismatches: unknown[] };
    expect(checked.mismatches).toEqual([]);
    expect(checked.samplings).toBeGreaterThanOrEqual(9);
  });

  it("reloads an untied model in place to exactly the next version's weights, proven by the probe, and back (issue 33)", async () => {
    const backend = new VllmBackend(vllm.url);
    const [next, first] = await Promise.all([
      publisherReference(PEAKED_MODEL_V1, { dtype: 'float32' }),
      publisherReference(PEAKED_MODEL, { dtype: 'float32' }),
    ]);
    expect(judgeProbe(next, await backend.scorePrompt(next.token_ids)).proven).toBe(false);
    await backend.updateWeights(1, PEAKED_MODEL_V1);
    const proof = judgeProbe(next, await backend.scorePrompt(next.token_ids));
    console.log(`untied reload: ${JSON.stringify(proof)}`);
    expect(proof.proven).toBe(true);
    await backend.updateWeights(2, PEAKED_MODEL);
    expect(judgeProbe(first, await backend.scorePrompt(first.token_ids)).proven).toBe(true);
  });
});

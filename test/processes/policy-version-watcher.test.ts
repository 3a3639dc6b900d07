import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SglangBackend } from '../../src/policy/sglang-backend.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { PolicyVersionWatcher } from '../../src/processes/policy-version-watcher.js';
import { startFakeVllm } from '../policy/fakes/fake-vllm.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { pollUntil } from '../../src/timing/poll-until.js';

// Policy versions are global to a database: each test publishes above what the last one left.
let db: TestDatabase;
let published = 0;
const publish = async () => {
  published += 1;
  await publishPolicyVersion(db.pool, published, `/checkpoints/step-${published}`);
  return published;
};

beforeAll(async () => {
  db = await startTestDatabase();
});
afterAll(async () => {
  await db?.stop();
});

const until = (condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) =>
  pollUntil(condition, { what: String(condition), timeoutMs, intervalMs: 50, fatal: () => true });

const settle = () => new Promise((resolve) => setTimeout(resolve, 600));

describe("a GPU worker's policy version watcher", () => {
  it('loads the current version again into a vLLM that restarted on its start-up weights, and only then', async () => {
    const fake = await startFakeVllm();
    const watcher = new PolicyVersionWatcher(db.pool, db.url, new VllmBackend(fake.url), { pollMs: 100, weightProof: 'optional' });
    try {
      await watcher.start();
      const version = await publish();
      await until(() => watcher.current() === version);
      const reloads = fake.rpcCalls().length;
      await settle();
      expect(fake.rpcCalls()).toHaveLength(reloads); // the server holds the version: polls reload nothing

      fake.forgetWeightVersion();
      await until(() => fake.rpcCalls().length === reloads + 1);
      expect(fake.rpcCalls().at(-1)!.kwargs).toEqual({ weights_path: `/checkpoints/step-${version}` });
      await settle();
      expect(fake.rpcCalls()).toHaveLength(reloads + 1);
      expect(await watcher.current()).toBe(version);
    } finally {
      await watcher.stop();
      await fake.close();
    }
  });

  it('loads it again into an SGLang-protocol server restarted on the same address', async () => {
    const tokenizer = await loadModelTokenizer();
    const config = { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS, tokensPerSecond: 1e6, seed: 3 };
    let policy = await startSimulatedPolicy(tokenizer, new AnswerBook([]), config);
    const watcher = new PolicyVersionWatcher(db.pool, db.url, new SglangBackend(policy.url), { pollMs: 100 });
    try {
      await watcher.start();
      const version = await publish();
      await until(() => policy.stats().weightVersion === version);
      const port = Number(new URL(policy.url).port);
      await policy.close();
      policy = await startSimulatedPolicy(tokenizer, new AnswerBook([]), config, { host: '127.0.0.1', port });
      expect(policy.stats().weightVersion).toBe(0);
      await until(() => policy.stats().weightVersion === version);
      expect(await watcher.current()).toBe(version);
    } finally {
      await watcher.stop();
      await policy.close();
    }
  });

  it('never reloads a server it cannot ask for its version (a reload aborts every in-flight request)', async () => {
    const fake = await startFakeVllm();
    const watcher = new PolicyVersionWatcher(db.pool, db.url, new VllmBackend(fake.url), { pollMs: 100, weightProof: 'optional' });
    try {
      await watcher.start();
      const version = await publish();
      await until(() => watcher.current() === version);
      const reloads = fake.rpcCalls().length;
      fake.forgetWeightVersion();
      fake.setFault('error'); // every answer fails, /weight_info included
      await settle();
      expect(fake.rpcCalls()).toHaveLength(reloads);
    } finally {
      await watcher.stop();
      await fake.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeServedLogprobs } from '../../src/policy/logprob-probe.js';
import { PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { SglangBackend } from '../../src/policy/sglang-backend.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { closedPort } from './fakes/fake-http.js';

const policies: RunningSimulatedPolicy[] = [];

async function simulated(logprobs: 'processed' | 'raw'): Promise<RunningSimulatedPolicy> {
  const policy = await startSimulatedPolicy(await loadModelTokenizer(), new AnswerBook([]), {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    tokensPerSecond: 1e6,
    seed: 3,
    logprobs,
  });
  policies.push(policy);
  return policy;
}

let processed: RunningSimulatedPolicy;
let raw: RunningSimulatedPolicy;
beforeAll(async () => {
  [processed, raw] = [await simulated('processed'), await simulated('raw')];
});
afterAll(async () => {
  await Promise.all(policies.map((policy) => policy.close()));
});

describe('probeServedLogprobs', () => {
  it("finds a server that returns the sampling distribution's logprobs, in six one-token requests", async () => {
    const before = processed.stats().requests;
    const served = await probeServedLogprobs(new SglangBackend(processed.url));
    expect(served).toMatchObject({ temperature: 'applied', truncation: 'applied' });
    expect(processed.stats().requests - before).toBe(6);
    expect(
      processed
        .stats()
        .recent.slice(-6)
        .every((r) => r.rid.startsWith('ratchet-logprob-probe/') && r.sentIds.length === 1),
    ).toBe(true);
  });

  it("finds a server that returns the model's own logprobs whatever the sampling", async () => {
    expect(await probeServedLogprobs(new SglangBackend(raw.url))).toMatchObject({ temperature: 'ignored', truncation: 'ignored' });
  });

  it("is undecided, with the server's answer as evidence, when the server refuses the probe", async () => {
    processed.setFaults({ rejectRate: 1 });
    try {
      const served = await probeServedLogprobs(new SglangBackend(processed.url));
      expect(served).toMatchObject({ temperature: 'undecided', truncation: 'undecided' });
      expect(served.evidence).toMatch(/the probe failed: .*HTTP 400/);
    } finally {
      processed.setFaults(NO_FAULTS);
    }
  });

  it('throws PolicyUnavailable for a server it cannot reach, so the worker asks again later', async () => {
    await expect(probeServedLogprobs(new SglangBackend(`http://127.0.0.1:${await closedPort()}`))).rejects.toBeInstanceOf(PolicyUnavailable);
  });
});

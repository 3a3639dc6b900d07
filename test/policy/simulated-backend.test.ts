import type { Problem } from '../../src/datasets/index.js';
import { SglangBackend } from '../../src/policy/sglang-backend.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { runBackendContract, type ContractServer } from './backend-contract.case.js';

const problems: Problem[] = [{ qid: 'p-1', problem: 'What is $6 \\times 7$?', gold: ['42'], source: 'math' }];

/** The simulated policy, paced slowly enough (about 20 ms a chunk) for a test to act mid-stream. */
async function simulatedServer(overrides: Partial<SimulatedPolicyConfig>): Promise<ContractServer> {
  const tokenizer = await loadModelTokenizer();
  const config: SimulatedPolicyConfig = {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    tokensPerSecond: 400,
    chunkTokens: 8,
    seed: 11,
    ...overrides,
  };
  const policy = await startSimulatedPolicy(tokenizer, new AnswerBook(problems), config);
  return {
    backend: new SglangBackend(policy.url),
    backendAt: (url) => new SglangBackend(url),
    prompt: promptIds(tokenizer, problems[0]!.problem),
    contextWindow: config.contextWindow,
    reportsWeightVersion: true,
    checkpoint: (version) => `/checkpoints/step-${version}`,
    served: (rid) => {
      const record = policy.stats().recent.find((r) => r.rid === rid);
      return record && { prompt: record.inputIds, sentIds: record.sentIds, sentLogprobs: record.sentLogprobs, end: record.end };
    },
    setFault: (fault) => policy.setFaults(fault === 'error' ? { errorRate: 1 } : fault === 'drop' ? { dropRate: 1 } : NO_FAULTS),
    close: policy.close,
  };
}

runBackendContract('SglangBackend against the simulated policy', () => simulatedServer({}));
runBackendContract('SglangBackend against the simulated policy with incremental streaming', () =>
  simulatedServer({ incrementalStreamingOutput: true }),
);

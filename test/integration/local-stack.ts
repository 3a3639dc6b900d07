import type { SimulatedPolicyConfig } from '../../src/policy/simulated/policy-config.js';
import { SAMPLE, startSimulatedStack, type SimulatedStack } from '../../src/stack/simulated-stack.js';
import { startTestTemporal, type TestTemporal } from './test-temporal.js';

export { SAMPLE };
export type { WorkerOptions } from '../../src/stack/simulated-stack.js';

/** A real Temporal and a real Postgres for one test file, plus the simulated policy (src/stack/simulated-stack.ts). */
export type TestStack = SimulatedStack<TestTemporal>;

/**
 * The simulated stack on the Temporal the suite runs against (the dev server, or the real server under
 * RATCHET_TEST_TEMPORAL=server). `dataset`: the problems the simulated policy knows the answers to.
 */
export function startTestStack(policyConfig: Partial<SimulatedPolicyConfig> = {}, dataset = SAMPLE): Promise<TestStack> {
  return startSimulatedStack(policyConfig, dataset, { startTemporal: startTestTemporal });
}

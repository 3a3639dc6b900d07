import path from 'node:path';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { CodeSandboxPool } from '../code/index.js';
import { loadDataset, type Problem } from '../datasets/index.js';
import type { AgentProgram } from '../agent/program-host.js';
import type { Environment } from '../environments/environment.js';
import { createBackend } from '../policy/backend-config.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { NO_FAULTS } from '../policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../policy/simulated/server.js';
import { readTrajectories, type ExportedTrajectory } from '../store/read/trajectory-export.js';
import { loadModelTokenizer, type ModelTokenizer } from '../tokens/model-tokenizer.js';
import { VerifierPool } from '../verifier/index.js';
import { startAdmission } from './admission.js';
import { startScratchStack, type ScratchStack, type StartedTemporal } from './scratch-stack.js';
import { loopbackTemporal } from './stack-connections.js';
import { startWorkers } from './workers.js';

/** The project's sample math problems. */
export const SAMPLE = path.resolve(import.meta.dirname, '../../data/sample.jsonl');

export interface WorkerOptions {
  cpu?: boolean;
  gpu?: boolean;
  heartbeatIntervalMs?: number;
  /** The GPU worker's inference server: the simulated policy unless given (a real vLLM in test/real-servers). */
  backend?: InferenceBackend;
  /** The GPU worker's slots (16 unless given) and the name of its server's own task queue (turn affinity). */
  slots?: number;
  serverName?: string;
  /** Workflow code for the CPU worker: the current release's unless given. */
  workflowBundle?: WorkflowBundleOption;
  /** The user's own environments, run in the CPU worker beside the built-in ones (what RATCHET_ENVIRONMENTS loads). */
  environments?: readonly Environment[];
  /** Agent programs the CPU worker runs (what RATCHET_AGENT_PROGRAMS registers). */
  agentPrograms?: readonly AgentProgram[];
}

/** A scratch stack with the simulated policy, and workers and a controller started on demand in this process. */
export interface SimulatedStack<T extends StartedTemporal = StartedTemporal> extends ScratchStack<T> {
  tokenizer: ModelTokenizer;
  problems: Problem[];
  policy: RunningSimulatedPolicy;
  /** Stored trajectories whose id starts with `prefix`, oldest first. */
  exported(prefix: string, options?: { includeFailed?: boolean }): Promise<ExportedTrajectory[]>;
  /** Runs a CPU worker (and, unless told not to, a GPU worker) in this process until the returned stop (or the stack's). */
  startWorkers(options?: WorkerOptions): Promise<() => Promise<void>>;
  /** Runs an admission controller in this process (polling every 200 ms unless told) until the returned stop (or the stack's). */
  startController(options?: { pollMs?: number; sweepMs?: number }): Promise<() => Promise<void>>;
}

/**
 * What the integration tests and the benchmarks run on: a scratch stack, the simulated policy answering
 * `dataset`'s problems (the sample math set unless given), one verifier pool and one code sandbox pool.
 */
export async function startSimulatedStack<T extends StartedTemporal = StartedTemporal>(
  policyConfig: Partial<SimulatedPolicyConfig> = {},
  dataset = SAMPLE,
  options: { startTemporal?: (scratchDir: string) => Promise<T>; prefix?: string } = {},
): Promise<SimulatedStack<T>> {
  const stack = await startScratchStack<T>({ prefix: options.prefix ?? 'ratchet-test-', startTemporal: options.startTemporal });
  const { teardown, pool } = stack;
  return teardown.guard(async () => {
    const tokenizer = await loadModelTokenizer();
    const { problems } = await loadDataset(dataset);
    const policy = await startSimulatedPolicy(tokenizer, new AnswerBook(problems), {
      ...DEFAULT_SIMULATED_POLICY,
      faults: NO_FAULTS,
      tokensPerSecond: 1e6,
      ...policyConfig,
    });
    teardown.add('simulated policy', () => policy.close());
    const verifier = new VerifierPool({ size: 1 });
    teardown.add('verifier pool', () => verifier.close());
    const sandbox = new CodeSandboxPool();

    const workersOf = async (options: WorkerOptions = {}) => {
      const workers = await startWorkers({
        temporal: { address: stack.temporalAddress, settings: loopbackTemporal(stack.temporalAddress) },
        pool,
        databaseUrl: stack.databaseUrl,
        cpu:
          options.cpu === false
            ? undefined
            : {
                tokenizer,
                verifier,
                sandbox,
                workflowBundle: options.workflowBundle,
                environments: options.environments,
                agentPrograms: options.agentPrograms,
              },
        gpu:
          options.gpu === false
            ? undefined
            : {
                backend: options.backend ?? createBackend('sglang', policy.url),
                slots: options.slots ?? 16,
                serverName: options.serverName,
                heartbeatIntervalMs: options.heartbeatIntervalMs,
                versionPollMs: 200,
                healthIntervalMs: 250,
              },
      });
      teardown.add('workers', workers.stop);
      return workers.stop;
    };
    const exported = async (prefix: string, options: { includeFailed?: boolean } = {}) => {
      const rows: ExportedTrajectory[] = [];
      for await (const row of readTrajectories(pool, options)) if (row.trajectory_id.startsWith(prefix)) rows.push(row);
      return rows;
    };
    return {
      ...stack,
      tokenizer,
      problems,
      policy,
      exported,
      startWorkers: workersOf,
      startController: (options = {}) =>
        startAdmission({ pool, client: stack.client, databaseUrl: stack.databaseUrl, pollMs: 200, ...options }, teardown),
    };
  });
}

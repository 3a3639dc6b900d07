import { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type pg from 'pg';
import { AdmissionController } from '../admission/admission-controller.js';
import type { RatchetConfig } from '../config.js';
import type { Problem } from '../datasets/index.js';
import { createBackend } from '../policy/backend-config.js';
import { NO_FAULTS } from '../policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy } from '../policy/simulated/server.js';
import { startStack, type Stack } from '../stack/local-stack.js';
import { openDatabase } from '../store/database.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { VerifierPool } from '../verifier/index.js';
import { createCpuWorker } from '../workers/cpu-worker.js';
import { startGpuWorkerService } from '../workers/gpu-worker-service.js';
import { connectClient, connectWorker, ensureSearchAttributes } from '../workers/temporal-connection.js';

export interface LocalRuntime {
  stack: Stack;
  client: Client;
  pool: pg.Pool;
  /** The inference server generation goes to: RATCHET_POLICY_URL, or the simulated policy started here. */
  policyUrl: string;
  simulated: boolean;
  stop(): Promise<void>;
}

export interface LocalRuntimeOptions {
  /** Problems the simulated policy can answer (it looks their gold answers up). */
  problems: readonly Problem[];
  /** Run a CPU worker, a GPU worker and the admission controller in this process (false: they run elsewhere). */
  workers: boolean;
  headless?: boolean;
  simulatedPolicy?: Partial<SimulatedPolicyConfig>;
}

/**
 * Everything one process needs to run rollouts on one machine: the stack (embedded or configured), a client,
 * and, when asked, both workers and the simulated policy. `stop()` undoes it in reverse order.
 */
export async function startLocalRuntime(config: RatchetConfig, options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => { for (const fn of stops.reverse()) await fn().catch(() => undefined); };
  try {
    const stack = await startStack(config, { headless: options.headless });
    stops.push(stack.stop);
    const pool = await openDatabase(stack.databaseUrl);
    stops.push(() => pool.end());
    const connection = await connectClient(stack.temporalAddress, config.temporal);
    stops.push(() => connection.close());
    await ensureSearchAttributes(connection, config.temporal.namespace);
    const client = new Client({ connection, namespace: config.temporal.namespace });

    const tokenizer = await loadModelTokenizer(config.tokenizerDir);
    let policyUrl = config.policyUrl;
    if (!policyUrl) {
      const policy = await startSimulatedPolicy(tokenizer, new AnswerBook(options.problems), { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS, ...options.simulatedPolicy });
      stops.push(policy.close);
      policyUrl = policy.url;
    }
    if (options.workers) {
      const workerConnection = await connectWorker(stack.temporalAddress, config.temporal);
      stops.push(() => workerConnection.close());
      const verifier = new VerifierPool(config.verifier);
      stops.push(() => verifier.close());
      const cpuWorker: Worker = await createCpuWorker({ connection: workerConnection, namespace: config.temporal.namespace, pool, tokenizer, verifier, maxCachedWorkflows: config.workflowCache, uiUrl: config.uiUrl });
      const gpu = await startGpuWorkerService({
        connection: workerConnection, namespace: config.temporal.namespace, pool, databaseUrl: stack.databaseUrl,
        backend: createBackend(config.policyUrl ? config.policyBackend : 'sglang', policyUrl, config.policyUrl ? config.policyApiKey : undefined), slots: config.gpuSlots, heartbeatIntervalMs: config.heartbeatIntervalMs,
      });
      const cpuRunning = cpuWorker.run();
      stops.push(async () => {
        await gpu.stop();
        if (cpuWorker.getState() === 'RUNNING') cpuWorker.shutdown();
        await cpuRunning.catch(() => undefined);
      });
      const controller = new AdmissionController({ pool, temporal: client, databaseUrl: stack.databaseUrl });
      await controller.start();
      stops.push(() => controller.stop());
    }
    return { stack, client, pool, policyUrl, simulated: !config.policyUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

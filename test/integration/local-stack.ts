import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker, type WorkflowBundle } from '@temporalio/worker';
import type pg from 'pg';
import { loadDataset, type Problem } from '../../src/datasets/index.js';
import { AdmissionController } from '../../src/admission/admission-controller.js';
import { createBackend } from '../../src/policy/backend-config.js';
import type { InferenceBackend } from '../../src/policy/inference-backend.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';
import { openDatabase } from '../../src/store/database.js';
import { readTrajectories, type ExportedTrajectory } from '../../src/store/trajectory-export.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { VerifierPool } from '../../src/verifier/index.js';
import { createCpuWorker } from '../../src/workers/cpu-worker.js';
import { startGpuWorkerService } from '../../src/workers/gpu-worker-service.js';
import { ensureSearchAttributes } from '../../src/workers/temporal-connection.js';
import { startTestTemporal, type TestTemporal } from './test-temporal.js';

export const SAMPLE = path.resolve(import.meta.dirname, '../../data/sample.jsonl');

/** A real Temporal dev server and a real Postgres for one test file, plus the simulated policy. */
export interface TestStack {
  temporalAddress: string;
  databaseUrl: string;
  /** The Temporal dev server's and the postmaster's processes (the stall tests freeze them). */
  pids: { temporal?: number; postgres?: number };
  /** The Temporal it runs against: the dev server, or the real server under RATCHET_TEST_TEMPORAL=server. */
  temporal: TestTemporal;
  client: Client;
  pool: pg.Pool;
  tokenizer: ModelTokenizer;
  problems: Problem[];
  policy: RunningSimulatedPolicy;
  /** Stored trajectories whose id starts with `prefix`, oldest first. */
  exported(prefix: string, options?: { includeFailed?: boolean }): Promise<ExportedTrajectory[]>;
  /** Runs a CPU worker (and, unless told not to, a GPU worker) in this process until the returned stop. */
  startWorkers(options?: WorkerOptions): Promise<() => Promise<void>>;
  /** Runs an admission controller in this process (polling every 200 ms) until the returned stop. */
  startController(): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  cpu?: boolean;
  gpu?: boolean;
  heartbeatIntervalMs?: number;
  /** The GPU worker's inference server: the simulated policy unless given (a real vLLM in test/real-servers). */
  backend?: InferenceBackend;
  /** Workflow code for the CPU worker: the current release's unless given. */
  workflowBundle?: WorkflowBundle;
}

/** `dataset`: the problems the simulated policy knows the answers to (the sample math set unless given). */
export async function startTestStack(policyConfig: Partial<SimulatedPolicyConfig> = {}, dataset = SAMPLE): Promise<TestStack> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-test-'));
  await chmod(stateDir, 0o755);
  const stops: (() => Promise<unknown>)[] = [() => rm(stateDir, { recursive: true, force: true })];
  const stop = async () => { for (const fn of stops.reverse()) await fn().catch(() => undefined); };
  try {
    const temporal = await startTestTemporal(stateDir);
    stops.push(temporal.stop);
    const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
    stops.push(postgres.stop);
    const pool = await openDatabase(postgres.url);
    stops.push(() => pool.end());
    const connection = await Connection.connect({ address: temporal.address });
    stops.push(() => connection.close());
    await ensureSearchAttributes(connection, 'default');
    const tokenizer = await loadModelTokenizer();
    const { problems } = await loadDataset(dataset);
    const policy = await startSimulatedPolicy(tokenizer, new AnswerBook(problems), { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS, tokensPerSecond: 1e6, ...policyConfig });
    stops.push(policy.close);
    const verifier = new VerifierPool({ size: 1 });
    stops.push(() => verifier.close());

    const startWorkers = async (options: WorkerOptions = {}) => {
      const workerConnection = await NativeConnection.connect({ address: temporal.address });
      const cpuWorker: Worker | undefined = options.cpu === false ? undefined
        : await createCpuWorker({ connection: workerConnection, namespace: 'default', pool, tokenizer, verifier, workflowBundle: options.workflowBundle });
      const cpuRunning = cpuWorker?.run();
      const gpu = options.gpu === false ? undefined : await startGpuWorkerService({
        connection: workerConnection, namespace: 'default', pool, databaseUrl: postgres.url, backend: options.backend ?? createBackend('sglang', policy.url),
        slots: 16, heartbeatIntervalMs: options.heartbeatIntervalMs, versionPollMs: 200, healthIntervalMs: 250,
      });
      return async () => {
        await gpu?.stop();
        if (cpuWorker?.getState() === 'RUNNING') cpuWorker.shutdown();
        await cpuRunning?.catch(() => undefined);
        await workerConnection.close();
      };
    };
    const startController = async () => {
      const controller = new AdmissionController({ pool, temporal: new Client({ connection }), databaseUrl: postgres.url, pollMs: 200 });
      await controller.start();
      return () => controller.stop();
    };
    const exported = async (prefix: string, options: { includeFailed?: boolean } = {}) => {
      const rows: ExportedTrajectory[] = [];
      for await (const row of readTrajectories(pool, options)) if (row.trajectory_id.startsWith(prefix)) rows.push(row);
      return rows;
    };
    return {
      exported,
      temporalAddress: temporal.address, databaseUrl: postgres.url, pids: { temporal: temporal.pid, postgres: postgres.pid }, temporal, client: new Client({ connection }), pool, tokenizer, problems, policy, startWorkers, startController, stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

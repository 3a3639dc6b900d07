import type { WorkflowBundleOption } from '@temporalio/worker';
import type pg from 'pg';
import type { CodeSandboxPool } from '../code/index.js';
import type { Environment } from '../environments/environment.js';
import type { RatchetConfig } from '../config.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { VerifierPool } from '../verifier/index.js';
import { Client } from '@temporalio/client';
import type { AgentProgram } from '../agent/program-host.js';
import { startAgentHost, type AgentEndpointAddress, type AgentHost } from '../workers/agent-host.js';
import { createCpuWorker } from '../workers/cpu-worker.js';
import { startGpuWorkerService } from '../processes/gpu-worker-service.js';
import { connectClient, connectWorker } from '../temporal/connection.js';

/** The CPU worker's part: workflows and the CPU activities, with the pools they verify answers in. */
export interface CpuWorkerPart {
  tokenizer: ModelTokenizer;
  verifier: VerifierPool;
  sandbox: CodeSandboxPool;
  /** The user's own environments, run in-process beside the built-in ones. */
  environments?: readonly Environment[];
  /** Agent programs it runs (RATCHET_AGENT_PROGRAMS): with any, it serves their endpoint. */
  agentPrograms?: readonly AgentProgram[];
  /** Where that endpoint listens, and the URL agents reach it at (RATCHET_AGENT_LISTEN, RATCHET_AGENT_URL); loopback unless given. */
  agentEndpoint?: AgentEndpointAddress;
  maxCachedWorkflows?: number;
  uiUrl?: string;
  /** The workflow code to run; the current release's unless given (the deploy test runs an earlier one). */
  workflowBundle?: WorkflowBundleOption;
}

/** The GPU worker's part: generation against an inference server, following published policy versions. */
export interface GpuWorkerPart {
  backend: InferenceBackend;
  slots: number;
  /** Names the server's own task queue (turn affinity); by default this host and the server's address. */
  serverName?: string;
  heartbeatIntervalMs?: number;
  versionPollMs?: number;
  healthIntervalMs?: number;
}

export interface WorkersOptions {
  temporal: { address: string; settings: RatchetConfig['temporal'] };
  pool: pg.Pool;
  databaseUrl: string;
  /** Absent: no CPU worker in this process. */
  cpu?: CpuWorkerPart;
  /** Absent: no GPU worker in this process. */
  gpu?: GpuWorkerPart;
}

/** Workers running in this process: `done` settles when they stop by themselves; `stop` stops them, once. */
export interface RunningWorkers {
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * The one way Ratchet starts workers (`ratchet worker`, `ratchet dev`, the tests and the benchmarks): one worker
 * connection, a CPU worker and a GPU worker service as asked. `stop` stops the GPU worker, then the CPU worker,
 * then closes the connection; a start that fails stops what it started.
 */
export async function startWorkers(options: WorkersOptions): Promise<RunningWorkers> {
  const { settings } = options.temporal;
  const connection = await connectWorker(options.temporal.address, settings);
  const agents = await startAgents(options).catch(async (error: unknown) => {
    await connection.close();
    throw error;
  });
  const cpu =
    options.cpu &&
    (await createCpuWorker({ connection, namespace: settings.namespace, pool: options.pool, ...options.cpu, agentHost: agents?.host }).catch(
      async (error: unknown) => {
        await agents?.close();
        await connection.close();
        throw error;
      },
    ));
  const cpuRunning = cpu?.run();
  const gpu =
    options.gpu &&
    (await startGpuWorkerService({
      connection,
      namespace: settings.namespace,
      pool: options.pool,
      databaseUrl: options.databaseUrl,
      ...options.gpu,
    }).catch(async (error: unknown) => {
      await stopCpu();
      await connection.close();
      throw error;
    }));
  async function stopCpu(): Promise<void> {
    if (cpu?.getState() === 'RUNNING') cpu.shutdown();
    await cpuRunning?.catch(() => undefined);
    await agents?.close();
  }
  // A worker that fails while running is not caught here (as an unawaited run it ends the process); once stopping, its end is expected.
  const done = Promise.all([cpuRunning, gpu?.done]).then(() => undefined);
  let stopped: Promise<void> | undefined;
  return {
    done,
    stop: () =>
      (stopped ??= (async () => {
        done.catch(() => undefined);
        await gpu?.stop();
        await stopCpu();
        await connection.close();
      })()),
  };
}

/**
 * The endpoint the CPU worker's agent programs call, with a client connection of its own (each call is a Temporal
 * Update); none when the worker runs no agent program.
 */
async function startAgents(options: WorkersOptions): Promise<{ host: AgentHost; close(): Promise<void> } | undefined> {
  const programs = options.cpu?.agentPrograms ?? [];
  if (!options.cpu || programs.length === 0) return undefined;
  const { settings } = options.temporal;
  const connection = await connectClient(options.temporal.address, settings);
  try {
    const client = new Client({ connection, namespace: settings.namespace });
    const host = await startAgentHost({ programs, pool: options.pool, client, tokenizer: options.cpu.tokenizer, ...options.cpu.agentEndpoint });
    return {
      host,
      close: async () => {
        await host.close();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

import { Command, Argument } from 'commander';
import type { NativeConnection } from '@temporalio/worker';
import type pg from 'pg';
import { loadConfig } from '../config.js';
import { createBackend } from '../policy/backend-config.js';
import { openDatabase } from '../store/database.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { VerifierPool } from '../verifier/index.js';
import { createCpuWorker } from '../workers/cpu-worker.js';
import { runGpuWorkerWhileHealthy } from '../workers/healthy-gpu-worker.js';
import { PolicyVersionWatcher } from '../workers/policy-version-watcher.js';
import { connectClient, connectWorker, ensureSearchAttributes } from '../workers/temporal-connection.js';

export function workerCommand(): Command {
  return new Command('worker')
    .description('run one worker against TEMPORAL_ADDRESS and DATABASE_URL until SIGINT/SIGTERM')
    .addArgument(new Argument('<kind>', 'cpu: workflows + verify/feedback/persist; gpu: generate against RATCHET_POLICY_URL').choices(['cpu', 'gpu']))
    .action(async (kind: 'cpu' | 'gpu') => {
      const config = loadConfig();
      if (!config.temporal.address || !config.databaseUrl) throw new Error('a standalone worker needs TEMPORAL_ADDRESS and DATABASE_URL (or use `ratchet dev`, which runs both workers in-process)');
      if (kind === 'gpu' && !config.policyUrl) throw new Error('the GPU worker needs RATCHET_POLICY_URL (an SGLang server or `ratchet sim-policy`)');
      const pool = await openDatabase(config.databaseUrl);
      const connection = await connectWorker(config.temporal.address, config.temporal);
      const verifier = kind === 'cpu' ? new VerifierPool(config.verifier) : undefined;
      try {
        const namespace = config.temporal.namespace;
        if (kind === 'cpu') {
          const client = await connectClient(config.temporal.address, config.temporal);
          await ensureSearchAttributes(client, namespace).finally(() => client.close());
        }
        process.stderr.write(`${kind} worker polling ${config.temporal.address} (${namespace})\n`);
        if (kind === 'cpu') {
          const worker = await createCpuWorker({ connection, namespace, pool, tokenizer: await loadModelTokenizer(config.tokenizerDir), verifier: verifier! });
          await worker.run();
        } else {
          await runGpuWorker(config.policyBackend, config.policyUrl!, config.databaseUrl, { connection, namespace, pool, slots: config.gpuSlots, heartbeatIntervalMs: config.heartbeatIntervalMs });
        }
      } finally {
        await verifier?.close();
        await connection.close();
        await pool.end();
      }
    });
}

/** The GPU worker: follows published policy versions and polls only while its server is healthy, until a signal. */
async function runGpuWorker(kind: 'sglang' | 'vllm', url: string, databaseUrl: string, deps: { connection: NativeConnection; namespace: string; pool: pg.Pool; slots: number; heartbeatIntervalMs: number }): Promise<void> {
  const backend = createBackend(kind, url);
  const versions = new PolicyVersionWatcher(deps.pool, databaseUrl, backend);
  await versions.start();
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  try {
    await runGpuWorkerWhileHealthy({ ...deps, backend, currentVersion: versions.current }, { signal: stop.signal });
  } finally {
    await versions.stop();
  }
}

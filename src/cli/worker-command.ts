import { Command, Argument } from 'commander';
import { loadConfig } from '../config.js';
import { createBackend } from '../policy/backend-config.js';
import { openDatabase } from '../store/database.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { VerifierPool } from '../verifier/index.js';
import { createCpuWorker } from '../workers/cpu-worker.js';
import { startGpuWorkerService } from '../workers/gpu-worker-service.js';
import { connectClient, connectWorker, ensureSearchAttributes } from '../workers/temporal-connection.js';
import { startMetricsFromEnvironment } from '../metrics/metrics-server.js';

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
      const metrics = await startMetricsFromEnvironment(pool);
      try {
        const namespace = config.temporal.namespace;
        if (kind === 'cpu') {
          const client = await connectClient(config.temporal.address, config.temporal);
          await ensureSearchAttributes(client, namespace).finally(() => client.close());
        }
        process.stderr.write(`${kind} worker polling ${config.temporal.address} (${namespace})\n`);
        if (kind === 'cpu') {
          const worker = await createCpuWorker({ connection, namespace, pool, tokenizer: await loadModelTokenizer(config.tokenizerDir), verifier: verifier!, maxCachedWorkflows: config.workflowCache, uiUrl: config.uiUrl });
          await worker.run();
        } else {
          const gpu = await startGpuWorkerService({
            connection, namespace, pool, databaseUrl: config.databaseUrl, backend: createBackend(config.policyBackend, config.policyUrl!, config.policyApiKey),
            slots: config.gpuSlots, heartbeatIntervalMs: config.heartbeatIntervalMs,
          });
          for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void gpu.stop());
          await gpu.done;
        }
      } finally {
        await metrics?.close();
        await verifier?.close();
        await connection.close();
        await pool.end();
      }
    });
}


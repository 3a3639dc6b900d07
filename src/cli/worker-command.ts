import { Command, Argument } from 'commander';
import { CodeSandboxPool } from '../code/index.js';
import { loadConfig } from '../config.js';
import { createBackend } from '../policy/backend-config.js';
import { openDatabase } from '../store/database.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { VerifierPool } from '../verifier/index.js';
import { BUILT_IN_ENVIRONMENTS } from '../environments/environment-set.js';
import { loadAgentProgramFile } from '../stack/agent-program-file.js';
import { loadEnvironmentModules } from '../stack/environment-modules.js';
import { startWorkers } from '../stack/workers.js';
import { Teardown } from '../stack/teardown.js';
import { connectClient, ensureSearchAttributes } from '../temporal/connection.js';
import { startMetricsFromEnvironment } from '../metrics/metrics-server.js';

export function workerCommand(): Command {
  return new Command('worker')
    .description('run one worker against TEMPORAL_ADDRESS and DATABASE_URL until SIGINT/SIGTERM')
    .addArgument(new Argument('<kind>', 'cpu: workflows + verify/feedback/persist; gpu: generate against RATCHET_POLICY_URL').choices(['cpu', 'gpu']))
    .action(async (kind: 'cpu' | 'gpu') => {
      const config = loadConfig();
      if (!config.temporal.address || !config.databaseUrl)
        throw new Error('a standalone worker needs TEMPORAL_ADDRESS and DATABASE_URL (or use `ratchet dev`, which runs both workers in-process)');
      if (kind === 'gpu' && !config.policyUrl) throw new Error('the GPU worker needs RATCHET_POLICY_URL (an SGLang server or `ratchet sim-policy`)');
      const teardown = new Teardown();
      try {
        const pool = await openDatabase(config.databaseUrl);
        teardown.add('database pool', () => pool.end());
        const metrics = await startMetricsFromEnvironment(pool);
        teardown.add('metrics', () => metrics?.close());
        const namespace = config.temporal.namespace;
        if (kind === 'cpu') {
          const client = await connectClient(config.temporal.address, config.temporal);
          await ensureSearchAttributes(client, namespace).finally(() => client.close());
        }
        const verifier = kind === 'cpu' ? new VerifierPool(config.verifier) : undefined;
        teardown.add('verifier pool', () => verifier?.close());
        const environments = kind === 'cpu' ? await loadEnvironmentModules(config.environmentModules) : [];
        process.stderr.write(`${kind} worker polling ${config.temporal.address} (${namespace})\n`);
        const workers = await startWorkers({
          temporal: { address: config.temporal.address, settings: config.temporal },
          pool,
          databaseUrl: config.databaseUrl,
          cpu: verifier && {
            tokenizer: await loadModelTokenizer(config.tokenizerDir),
            verifier,
            sandbox: new CodeSandboxPool(),
            maxCachedWorkflows: config.workflowCache,
            uiUrl: config.uiUrl,
            environments,
            agentPrograms: await loadAgentProgramFile(config.agentProgramFile, [...BUILT_IN_ENVIRONMENTS, ...environments.map((e) => e.name)]),
            agentEndpoint: config.agentEndpoint,
          },
          gpu:
            kind === 'gpu'
              ? {
                  backend: createBackend(config.policyBackend, config.policyUrl!, config.policyApiKey),
                  slots: config.gpuSlots,
                  heartbeatIntervalMs: config.heartbeatIntervalMs,
                  ...(config.gpuServerName ? { serverName: config.gpuServerName } : {}),
                }
              : undefined,
        });
        teardown.add('workers', workers.stop);
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void workers.stop());
        await workers.done;
      } finally {
        await teardown.run();
      }
    });
}

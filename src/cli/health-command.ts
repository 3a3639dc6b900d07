import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { createBackend } from '../policy/backend-config.js';
import { redactUrl } from '../secrets/redact-url.js';
import { pingDatabase } from '../store/database-ping.js';
import { connectClient } from '../temporal/connection.js';
import { UsageError } from './usage-error.js';

/**
 * `ratchet health`: the container healthcheck of a deployed worker or controller. Exits 0 when Temporal and
 * Postgres answer (and, with --policy, the inference server's /health), 1 otherwise, printing what failed.
 */
export function healthCommand(): Command {
  return new Command('health')
    .description('exit 0 when TEMPORAL_ADDRESS and DATABASE_URL answer (with --policy, RATCHET_POLICY_URL too); for container healthchecks')
    .option('--policy', 'also check the inference server (/health, with RATCHET_POLICY_API_KEY)', false)
    .action(async (flags: { policy: boolean }) => {
      const config = loadConfig();
      const { address } = config.temporal;
      if (!address || !config.databaseUrl) throw new UsageError('ratchet health checks a deployed worker: set TEMPORAL_ADDRESS and DATABASE_URL');
      if (flags.policy && !config.policyUrl) throw new UsageError('ratchet health --policy needs RATCHET_POLICY_URL');
      const checks: Record<string, () => Promise<unknown>> = {
        temporal: async () => {
          const connection = await connectClient(address, config.temporal);
          try {
            await connection.workflowService.getSystemInfo({});
          } finally {
            await connection.close();
          }
        },
        postgres: () => pingDatabase(config.databaseUrl!),
      };
      if (flags.policy) {
        checks['policy'] = async () => {
          if (!(await createBackend(config.policyBackend, config.policyUrl!, config.policyApiKey).health()))
            throw new Error(`${redactUrl(config.policyUrl!)}/health did not answer 200`);
        };
      }
      const results = await Promise.all(
        Object.entries(checks).map(async ([name, check]) => {
          const failure = await check().then(
            () => undefined,
            (error: unknown) => (error as Error)?.message ?? String(error),
          );
          return [name, failure ?? 'ok'] as const;
        }),
      );
      process.stdout.write(`${JSON.stringify(Object.fromEntries(results))}\n`);
      if (results.some(([, status]) => status !== 'ok'))
        throw new Error(
          `unhealthy: ${results
            .filter(([, s]) => s !== 'ok')
            .map(([n]) => n)
            .join(', ')}`,
        );
    });
}

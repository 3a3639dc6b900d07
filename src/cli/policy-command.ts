import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { latestPolicyVersion, publishPolicyVersion } from '../store/write/policy-versions.js';
import { servedWeights, serversNow } from '../store/write/served-weights.js';
import { UsageError } from './usage-error.js';
import { withDatabase } from './with-database.js';

export function policyCommand(): Command {
  const policy = new Command('policy').description('policy versions: the trainer publishes, every GPU worker loads and proves');
  policy
    .command('publish')
    .description('publish a new policy version; GPU workers load its weights into their servers and prove them against the reference')
    .requiredOption('--version <n>', 'the new version (greater than the current one)', (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`--version must be a non-negative integer, got "${value}"`);
      return n;
    })
    .option('--weights <path>', 'weights directory the inference servers load (as the server sees it)')
    .option(
      '--reference <file>',
      'the probe reference computed from these weights (python -m ratchet_rollouts.weights_probe DIR --out FILE); ' +
        'without it a real server refuses the version unless its worker runs with RATCHET_WEIGHT_PROOF=optional',
    )
    .action(async (flags: { version: number; weights?: string; reference?: string }) => {
      const reference = flags.reference === undefined ? undefined : readReference(flags.reference);
      await withDatabase(async (pool) => {
        await publishPolicyVersion(pool, flags.version, flags.weights, reference);
        process.stdout.write(
          `published policy version ${flags.version}${flags.weights ? ` (${flags.weights})` : ''}${reference ? ' with a probe reference' : ''}\n`,
        );
      });
    });
  policy
    .command('current')
    .description('print the newest published version (0 before any publish)')
    .action(async () => {
      await withDatabase(async (pool) => process.stdout.write(`${(await latestPolicyVersion(pool))?.version ?? 0}\n`));
    });
  policy
    .command('status')
    .description(
      "which weights each inference server serves now, and the ledger of every load: when asked, when loaded, the probe's figures, the verdict",
    )
    .option('--json', 'one JSON object: {servers, ledger}')
    .action(async (flags: { json?: boolean }) => {
      await withDatabase(async (pool) => {
        const [servers, ledger] = [await serversNow(pool), await servedWeights(pool, { limit: 50 })];
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ servers, ledger })}\n`);
          return;
        }
        const latest = (await latestPolicyVersion(pool))?.version ?? 0;
        process.stdout.write(`published version ${latest}\n\nserving now\n`);
        for (const server of servers) {
          process.stdout.write(
            `  ${server.server}  ${server.version === null ? 'NONE (takes no turn)' : `v${server.version}`}  since ${server.since.toISOString()}${server.detail ? `  (${server.detail})` : ''}\n`,
          );
        }
        process.stdout.write('\nledger (newest first; Δ: mean / max |served − reference| logprob over the probe, nats)\n');
        for (const row of ledger) {
          const figures =
            row.meanAbsDelta === null ? '' : `  Δ ${row.meanAbsDelta.toFixed(4)} / ${row.maxAbsDelta!.toFixed(4)} over ${row.probeTokens} tokens`;
          const error = row.errorType ? `  ${row.errorType}: ${row.error ?? ''}` : row.verdict === 'unproven' && row.error ? `  (${row.error})` : '';
          process.stdout.write(
            `  v${row.version}  ${row.server}  ${row.verdict}  asked ${row.requestedAt.toISOString()}${row.loadedAt ? `  loaded ${row.loadedAt.toISOString()}` : ''}${figures}${error}\n`,
          );
        }
      });
    });
  return policy;
}

function readReference(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--reference ${file}: ${(error as Error).message}`);
  }
}

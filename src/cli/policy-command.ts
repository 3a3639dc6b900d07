import { Command, InvalidArgumentError } from 'commander';
import { latestPolicyVersion, publishPolicyVersion } from '../store/policy-versions.js';
import { withDatabase } from './with-database.js';

export function policyCommand(): Command {
  const policy = new Command('policy').description('policy versions: the trainer publishes, every GPU worker loads');
  policy.command('publish')
    .description('publish a new policy version; GPU workers load its weights into their servers')
    .requiredOption('--version <n>', 'the new version (greater than the current one)', (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`--version must be a non-negative integer, got "${value}"`);
      return n;
    })
    .option('--weights <path>', 'weights directory the inference servers load (as the server sees it)')
    .action(async (flags: { version: number; weights?: string }) => {
      await withDatabase(async (pool) => {
        await publishPolicyVersion(pool, flags.version, flags.weights);
        process.stdout.write(`published policy version ${flags.version}${flags.weights ? ` (${flags.weights})` : ''}\n`);
      });
    });
  policy.command('current')
    .description('print the newest published version (0 before any publish)')
    .action(async () => {
      await withDatabase(async (pool) => process.stdout.write(`${(await latestPolicyVersion(pool))?.version ?? 0}\n`));
    });
  return policy;
}

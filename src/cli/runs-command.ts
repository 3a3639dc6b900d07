import { Command } from 'commander';
import { withDatabase } from './with-database.js';
import { withRolloutClient } from './with-rollout-client.js';
import { runStatus } from '../admission/run-status.js';

export function runsCommand(): Command {
  const runs = new Command('runs').description('training runs: their counters, and cancelling them');
  runs.command('status')
    .description('print a run\'s counters (groups waiting, running, accepted, consumed, capacity..., failed trajectories by type and class) as JSON')
    .argument('<run-id>')
    .action(async (runId: string) => {
      const status = await withDatabase((pool) => runStatus(pool, runId));
      if (!status) throw new Error(`no run ${runId}`);
      process.stdout.write(`${JSON.stringify(status)}\n`);
    });
  runs.command('cancel')
    .description('cancel a run, or one group of it: waiting groups never start, running trajectories are cancelled')
    .argument('<run-id>')
    .option('--group <group-id>', 'cancel only this group')
    .action(async (runId: string, flags: { group?: string }) => {
      const cancelled = await withRolloutClient((client) => client.cancel(flags.group ? { groupId: flags.group } : { runId }));
      process.stdout.write(`${JSON.stringify({ runId, group: flags.group ?? null, cancelledTrajectories: cancelled })}\n`);
    });
  runs.command('watch')
    .description('print each group of a run as it finishes, one JSON line each, until Ctrl-C')
    .argument('<run-id>')
    .action(async (runId: string) => {
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      await withRolloutClient(async (client) => {
        for await (const group of client.completions(runId, { signal: stop.signal })) process.stdout.write(`${JSON.stringify(group)}\n`);
      });
    });
  return runs;
}

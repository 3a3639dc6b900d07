import { Client } from '@temporalio/client';
import type pg from 'pg';
import { Command } from 'commander';
import { withDatabase } from './with-database.js';
import { withRolloutClient } from './with-rollout-client.js';
import { runStatus } from '../store/read/run-status.js';
import { temporalRunStatus, type TemporalRunStatus } from '../processes/run-workflows.js';
import { loadConfig } from '../config.js';
import { trainingSteps } from '../store/write/training-steps.js';
import { connectClient } from '../temporal/connection.js';

export function runsCommand(): Command {
  const runs = new Command('runs').description('training runs: their counters, and cancelling them');
  runs
    .command('status')
    .description(
      "print a run's counters (groups waiting, running, accepted, rejected, cancelled, consumed, capacity...; trajectories " +
        'submitted, queued, running, completed, failed, consumed and stale, failed ones by type and class; queue, generate and verify latency ' +
        'p50/p95 in ms over the newest 50 stored trajectories, as the run page defines them) ' +
        "as JSON, with its trainer's steps so far and the last one's metrics, and Temporal's count of its trajectory workflows by status " +
        'and how many disagree with their rows',
    )
    .argument('<run-id>')
    .action(async (runId: string) => {
      const status = await withDatabase(async (pool, _databaseUrl, temporalAddress) => {
        const run = await runStatus(pool, runId);
        if (!run) return undefined;
        const steps = await trainingSteps(pool, runId);
        return { ...run, training: { steps: steps.length, last: steps.at(-1) ?? null }, temporal: await temporalSide(pool, temporalAddress, runId) };
      });
      if (!status) throw new Error(`no run ${runId}`);
      if (!status.temporal.reachable)
        process.stderr.write(`ratchet runs status: Temporal was unreachable (${status.temporal.error}); the counters are Postgres's alone\n`);
      process.stdout.write(`${JSON.stringify(status)}\n`);
    });
  runs
    .command('cancel')
    .description('cancel a run, or one group of it: waiting groups never start, running trajectories are cancelled')
    .argument('<run-id>')
    .option('--group <group-id>', 'cancel only this group')
    .action(async (runId: string, flags: { group?: string }) => {
      const cancelled = await withRolloutClient((client) => client.cancel(flags.group ? { groupId: flags.group } : { runId }));
      process.stdout.write(`${JSON.stringify({ runId, group: flags.group ?? null, cancelledTrajectories: cancelled })}\n`);
    });
  runs
    .command('watch')
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

/** Temporal's side of a run. Temporal unreachable is an answer, not a failure: Postgres's counters still print. */
async function temporalSide(pool: pg.Pool, address: string, runId: string): Promise<TemporalRunStatus> {
  const config = loadConfig();
  const connection = await connectClient(address, config.temporal, 5_000).catch((error: Error) => error);
  if (connection instanceof Error) return { reachable: false, error: connection.message };
  try {
    return await temporalRunStatus(pool, new Client({ connection, namespace: config.temporal.namespace }), runId);
  } finally {
    await connection.close();
  }
}

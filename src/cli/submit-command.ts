import { Command } from 'commander';
import { runConfigSchema } from '../admission/group-membership.js';
import { resolveRolloutOptions } from '../trajectory/options.js';
import {
  loadProblems,
  nonNegativeInt,
  positiveInt,
  rolloutOptionsFrom,
  withEnvironment,
  withEnvironmentOptions,
  withRolloutOptions,
} from './shared-options.js';
import { withRolloutClient } from './with-rollout-client.js';

export function submitCommand(): Command {
  return withEnvironmentOptions(
    withRolloutOptions(
      new Command('submit')
        .description("submit a dataset to a training run as groups of n samples; they start as the run's staleness bound allows")
        .requiredOption('--run <id>', 'the training run (created by its first submission)')
        .requiredOption('--dataset <file>', 'JSONL dataset (GSM8K, MATH or AReaL shape)')
        .option('--limit <n>', 'use the first N valid rows', positiveInt)
        .option('--samples <n>', 'n: trajectories per prompt (the group size)', positiveInt, 1)
        .option('--tag <tag>', 'submit prompts again in the same run (another epoch): group ids get @TAG')
        .option('--max-head-offpolicyness <eta>', 'η: policy versions a group may lag the trainer', nonNegativeInt, 0)
        .requiredOption('--batch-size <groups>', 'groups the trainer consumes per policy version', positiveInt)
        .option('--max-concurrent <groups>', 'most groups generating at once (default: the batch size)', positiveInt),
    ),
  ).action(async (flags) => {
    const run = runConfigSchema.parse({
      runId: flags.run,
      maxHeadOffpolicyness: flags.maxHeadOffpolicyness,
      batchSize: flags.batchSize,
      maxConcurrent: flags.maxConcurrent ?? flags.batchSize,
    });
    const rollout = rolloutOptionsFrom(flags);
    resolveRolloutOptions(rollout);
    const problems = withEnvironment(await loadProblems(flags.dataset, flags.limit), flags);
    const groups = await withRolloutClient((client) => client.submit(run, problems, { samples: flags.samples, rollout, tag: flags.tag }));
    const duplicates = groups.filter((g) => g.duplicate).length;
    process.stdout.write(`${JSON.stringify({ run: run.runId, groups: groups.length, trajectories: groups.length * flags.samples, duplicates })}\n`);
    if (duplicates > 0) process.stderr.write(`${duplicates} groups were already submitted to run ${run.runId}: left as they were\n`);
  });
}

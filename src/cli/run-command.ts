import { Command } from 'commander';
import cliProgress from 'cli-progress';
import { loadConfig } from '../config.js';
import { startLocalRuntime } from '../stack/local-runtime.js';
import { runRollouts } from '../client/run-rollouts.js';
import { formatSummary, summarise, type RunSummary } from './run-summary.js';
import { trajectoryRequests } from '../client/submit.js';
import { resolveRolloutOptions, type RolloutOptions } from '../trajectory/options.js';
import { loadProblems, positiveInt, rolloutOptionsFrom, withEnvironment, withEnvironmentOptions, withRolloutOptions } from './shared-options.js';
import type { JsonValue } from '../environments/environment.js';
import { exitOnInterrupt } from './interrupt.js';
import { checkEnvironmentsServed } from '../client/served-environments.js';
import { environmentNameOf } from '../environments/environment-set.js';

export interface RunArguments {
  dataset: string;
  limit?: number;
  samples: number;
  runName: string;
  options: Partial<RolloutOptions>;
  submitOnly: boolean;
  /** Every row's environment (`--environment`), and its arguments (`--environment-args`), over the rows' own. */
  environment?: string;
  environmentArgs?: { [key: string]: JsonValue };
}

export function runCommand(): Command {
  return withEnvironmentOptions(
    withRolloutOptions(
      new Command('run')
        .description('submit trajectories for a dataset, show progress, wait and print a summary')
        .requiredOption('--dataset <file>', 'JSONL dataset (GSM8K, MATH or AReaL shape)')
        .option('--limit <n>', 'use the first N valid rows', positiveInt)
        .option('--samples <n>', 'trajectories per problem', positiveInt, 1)
        .option('--run-name <name>', 'trajectory ids are <run-name>/<qid>/<sample>; reuse a name to resume a run without duplicates')
        .option('--submit-only', 'do not run workers in this process (they run elsewhere)', false),
    ),
  ).action(async (flags) => {
    const summary = await runAndReport({
      dataset: flags.dataset,
      limit: flags.limit,
      samples: flags.samples,
      submitOnly: flags.submitOnly,
      environment: flags.environment,
      environmentArgs: flags.environmentArgs,
      runName: flags.runName ?? `run-${new Date().toISOString().replace(/[:.]/g, '-')}`,
      options: rolloutOptionsFrom(flags),
    });
    failIfAnyFailed(summary);
  });
}

/** A run with failed trajectories exits 1, saying how many: a script must not mistake it for a clean run. */
export function failIfAnyFailed(summary: RunSummary): void {
  if (summary.failed === 0) return;
  process.stderr.write(`ratchet: ${summary.failed} of ${summary.trajectories} trajectories failed\n`);
  process.exitCode = 1;
}

/** Runs a dataset on the configured (or embedded) stack and prints the summary; shared by `run` and `demo`. */
export async function runAndReport(args: RunArguments): Promise<RunSummary> {
  resolveRolloutOptions(args.options); // bad options fail here, before anything starts
  const config = loadConfig();
  const problems = withEnvironment(await loadProblems(args.dataset, args.limit), args);
  const requests = trajectoryRequests(args.runName, problems, args.samples, args.options);
  process.stderr.write(`run ${args.runName}: ${requests.length} trajectories (${problems.length} problems × ${args.samples} samples)\n`);
  const runtime = await startLocalRuntime(config, { problems, workers: !args.submitOnly, headless: true });
  // The first Ctrl-C or SIGTERM ends the run within seconds: what was submitted stays submitted (Temporal has it),
  // and the same --run-name waits for it again instead of starting it twice.
  const stopListening = exitOnInterrupt({
    message: `what was submitted stays submitted${args.submitOnly ? ' and runs on the workers' : ''}; \`ratchet run --run-name ${args.runName}\` with the same dataset waits for it again`,
    cleanup: () => runtime.stop(),
    boundMs: 10_000,
  });
  try {
    // A name nothing runs fails here, before anything is submitted, where this process runs the CPU worker itself.
    if (runtime.environments) await checkEnvironmentsServed(runtime.client, requests.map(environmentNameOf), runtime.environments);
    const bar = new cliProgress.SingleBar(
      { format: 'trajectories [{bar}] {value}/{total} | {correct} correct first turns | {failed} failed', stream: process.stderr },
      cliProgress.Presets.shades_classic,
    );
    let correct = 0;
    let failed = 0;
    const started = performance.now();
    const results = await runRollouts(
      runtime.client,
      requests,
      {
        onSubmitted: (total, duplicates) => {
          if (duplicates > 0)
            process.stderr.write(`${duplicates} already submitted under this run name: waiting for those instead of starting them again\n`);
          bar.start(total, 0, { correct, failed });
        },
        onFinished: (result, done) => {
          if (result.status === 'failed') failed += 1;
          if (result.turns[0]?.success) correct += 1;
          bar.update(done, { correct, failed });
        },
      },
      runtime.pool,
    );
    bar.stop();
    const summary = summarise(results, (performance.now() - started) / 1000);
    process.stdout.write(`${formatSummary(summary)}\n`);
    for (const result of results.filter((r) => r.status === 'failed').slice(0, 5))
      process.stderr.write(`failed ${result.trajectoryId}: ${result.error}\n`);
    return summary;
  } finally {
    stopListening();
    await runtime.stop();
  }
}

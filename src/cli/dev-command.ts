import { once } from 'node:events';
import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { startLocalRuntime } from '../rollout/local-runtime.js';
import { SAMPLE_DATASET } from './demo-command.js';
import { loadProblems } from './shared-options.js';

export function devCommand(): Command {
  return new Command('dev')
    .description('run the embedded stack (Temporal with UI, Postgres), both workers and the simulated policy until Ctrl-C')
    .option('--dataset <file>', 'problems the simulated policy knows the answers to', SAMPLE_DATASET)
    .action(async (flags) => {
      const config = loadConfig();
      const runtime = await startLocalRuntime(config, { problems: await loadProblems(flags.dataset), workers: true, headless: false });
      process.stdout.write([
        `Temporal      ${runtime.stack.temporalAddress}${runtime.stack.temporalUiUrl ? `  (UI ${runtime.stack.temporalUiUrl})` : ''}`,
        `Postgres      ${runtime.stack.databaseUrl}`,
        `policy        ${runtime.policyUrl}${runtime.simulated ? ' (simulated)' : ''}`,
        'Submit from another terminal with:',
        `  TEMPORAL_ADDRESS=${runtime.stack.temporalAddress} DATABASE_URL=${runtime.stack.databaseUrl} npx ratchet run --submit-only --dataset ${flags.dataset}`,
        'or train against it (an admission controller runs here):',
        `  npx ratchet submit --run r1 --dataset ${flags.dataset} --samples 4 --batch-size 2 --max-head-offpolicyness 1`,
        '  npx ratchet consume --run r1 --batch-size 2 --format arrow --out batch.arrow   # then: npx ratchet ack <batchId>',
        'Ctrl-C stops everything.',
        '',
      ].join('\n'));
      await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
      await runtime.stop();
    });
}

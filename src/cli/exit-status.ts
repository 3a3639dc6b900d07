import { CommanderError } from 'commander';
import { InvalidConfiguration } from '../config.js';
import { UsageError } from './usage-error.js';

/** Exit statuses: 0 done, 1 the work failed, 2 the command line or the environment is wrong (usage). */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The status `ratchet` exits with for an error that ended a command. */
export function exitStatusFor(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
  if (error instanceof UsageError || error instanceof InvalidConfiguration) return EXIT_USAGE;
  return EXIT_FAILURE;
}

import { UsageError } from './usage-error.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** LOG_LEVEL is read when the logger is first imported, before the configuration is: checked here, by name. */
export function checkLogLevel(env: NodeJS.ProcessEnv = process.env): void {
  const level = env['LOG_LEVEL'];
  if (level && !LEVELS.includes(level)) throw new UsageError(`LOG_LEVEL: expected one of ${LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
}

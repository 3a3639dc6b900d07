import { pino } from 'pino';
import { DefaultLogger, Runtime, type LogLevel, type TelemetryOptions } from '@temporalio/worker';

/** Structured logs on stderr (stdout carries command output such as JSONL exports). */
export const log = pino({ level: process.env.LOG_LEVEL ?? 'info' }, pino.destination(2));

const TEMPORAL_LEVELS: Record<string, LogLevel> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
  silent: 'ERROR',
};

/**
 * Routes the Temporal SDK's logs through pino. Workers log every state change at INFO, which buries a CLI's
 * output, so the SDK gets WARN unless LOG_LEVEL asks for more detail.
 */
export function installTemporalLogging(
  level: string = process.env.LOG_LEVEL ?? 'warn',
  telemetryOptions?: TelemetryOptions,
  shutdownSignals?: NodeJS.Signals[],
): void {
  const temporalLevel = TEMPORAL_LEVELS[level === 'info' ? 'warn' : level] ?? 'WARN';
  Runtime.install({
    // The SDK's own hooks (SIGINT, SIGTERM, …) shut its workers down and swallow the signal: a command that
    // handles signals itself (src/cli/interrupt.ts) passes none.
    ...(shutdownSignals ? { shutdownSignals } : {}),
    // The SDK's Prometheus exporter, for worker processes with RATCHET_METRICS_ADDRESS (src/metrics/sdk-metrics.ts).
    ...(telemetryOptions ? { telemetryOptions } : {}),
    logger: new DefaultLogger(temporalLevel, (entry) => {
      if (entry.message.startsWith('No workflows registered')) return; // the GPU worker is activity-only by design
      const method =
        entry.level === 'TRACE'
          ? 'trace'
          : entry.level === 'DEBUG'
            ? 'debug'
            : entry.level === 'INFO'
              ? 'info'
              : entry.level === 'WARN'
                ? 'warn'
                : 'error';
      log[method]({ ...entry.meta, component: 'temporal' }, entry.message);
    }),
  });
}

import { InvalidConfiguration } from '../config.js';

/** A host:port address, as RATCHET_METRICS_ADDRESS gives it. */
export function parseAddress(name: string, value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new InvalidConfiguration(`invalid configuration: ${name}: expected host:port (got ${JSON.stringify(value)})`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/**
 * Where the Temporal SDK runtime's own Prometheus exporter listens: RATCHET_SDK_METRICS_ADDRESS, or loopback on
 * the port after RATCHET_METRICS_ADDRESS's. Ratchet's /metrics appends what it serves, so one scrape gets both;
 * undefined when metrics are off.
 */
export function sdkMetricsAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!env.RATCHET_METRICS_ADDRESS) return undefined;
  if (env.RATCHET_SDK_METRICS_ADDRESS) return env.RATCHET_SDK_METRICS_ADDRESS;
  return `127.0.0.1:${parseAddress('RATCHET_METRICS_ADDRESS', env.RATCHET_METRICS_ADDRESS).port + 1}`;
}

/** Runtime.install's telemetry options for a worker process (the runtime is installed once, before any worker). */
export function sdkTelemetryOptions(env: NodeJS.ProcessEnv = process.env) {
  const bindAddress = sdkMetricsAddress(env);
  return bindAddress ? { metrics: { prometheus: { bindAddress, countersTotalSuffix: true } } } : undefined;
}

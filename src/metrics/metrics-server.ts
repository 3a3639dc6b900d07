import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { processRegistry } from './process-metrics.js';
import { parseAddress, sdkMetricsAddress } from './sdk-metrics.js';
import { registerStoredMetrics } from './stored-metrics.js';

export interface RunningMetrics {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves /metrics: Ratchet's stored outcome metrics (from Postgres), this process's own, and the Temporal SDK
 * runtime's (fetched from its exporter, when it runs one). A failed part leaves a comment, not a failed scrape.
 */
export async function startMetricsServer(options: { address: string; pool: pg.Pool; sdkAddress?: string }): Promise<RunningMetrics> {
  const { host, port } = parseAddress('RATCHET_METRICS_ADDRESS', options.address);
  const stored = new Registry();
  const refresh = registerStoredMetrics(stored, options.pool);
  const server: Server = createServer((request, response) => {
    if (request.url !== '/metrics') {
      response.writeHead(404).end('see /metrics\n');
      return;
    }
    void scrape(refresh, stored, options.sdkAddress).then((text) =>
      response.writeHead(200, { 'content-type': Registry.PROMETHEUS_CONTENT_TYPE }).end(text),
    );
  });
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const bound = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function scrape(refresh: () => Promise<void>, stored: Registry, sdkAddress: string | undefined): Promise<string> {
  const parts = await Promise.all([
    refresh().then(
      () => stored.metrics(),
      (error: Error) => `# ratchet stored metrics unavailable: ${error.message.replace(/\n/g, ' ')}\n`,
    ),
    processRegistry.metrics(),
    // Bounded: an exporter that never answers must not hang the whole scrape.
    sdkAddress
      ? fetch(`http://${sdkAddress}/metrics`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.text(),
          (error: Error) => `# temporal sdk metrics unavailable: ${error.message}\n`,
        )
      : '',
  ]);
  return parts.map((part) => (part.endsWith('\n') || part === '' ? part : `${part}\n`)).join('');
}

/** Starts the server when RATCHET_METRICS_ADDRESS is set (the worker and dev commands call this). */
export async function startMetricsFromEnvironment(pool: pg.Pool, env: NodeJS.ProcessEnv = process.env): Promise<RunningMetrics | undefined> {
  if (!env.RATCHET_METRICS_ADDRESS) return undefined;
  return startMetricsServer({ address: env.RATCHET_METRICS_ADDRESS, pool, sdkAddress: sdkMetricsAddress(env) });
}

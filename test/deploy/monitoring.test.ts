import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { processRegistry } from '../../src/metrics/process-metrics.js';
import { registerStoredMetrics } from '../../src/metrics/stored-metrics.js';

// Static checks of the monitoring files (Prometheus scrape config, Grafana provisioning and dashboard).
const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { environment?: Record<string, string> }> };
const prometheus = parse(read('deploy/prometheus/prometheus.yml')) as {
  scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[];
};
const dashboard = JSON.parse(read('deploy/grafana/dashboards/ratchet.json')) as {
  uid: string;
  panels: { title: string; datasource: { uid: string }; targets: { expr: string }[] }[];
};

async function ratchetMetricNames(): Promise<Set<string>> {
  const stored = new Registry();
  registerStoredMetrics(stored, {} as pg.Pool); // registering reads nothing; only a scrape queries
  const names = [...stored.getMetricsAsArray(), ...processRegistry.getMetricsAsArray()].map((m) => m.name);
  return new Set(names.flatMap((name) => [name, `${name}_bucket`, `${name}_count`, `${name}_sum`]));
}

describe('monitoring deployment', () => {
  it('scrapes both worker services on the port their RATCHET_METRICS_ADDRESS binds', () => {
    for (const service of ['ratchet-cpu-worker', 'ratchet-gpu-worker']) {
      const address = compose.services[service]!.environment!.RATCHET_METRICS_ADDRESS!;
      const job = prometheus.scrape_configs.find((c) => c.dns_sd_configs.some((d) => d.names.includes(service)));
      expect(job, service).toBeDefined();
      expect(job!.dns_sd_configs[0]!.port).toBe(Number(address.split(':').pop()));
    }
  });

  it('queries only metrics the workers export, through the provisioned data source', async () => {
    const known = await ratchetMetricNames();
    const datasource = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as { datasources: { uid: string; url: string }[] };
    expect(datasource.datasources[0]!.url).toBe('http://prometheus:9090');
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(12);
    for (const panel of dashboard.panels) {
      expect(panel.datasource.uid, panel.title).toBe(datasource.datasources[0]!.uid);
      for (const { expr } of panel.targets) {
        const metrics = expr.match(/\b(ratchet|temporal)_[a-z_]+/g) ?? [];
        expect(metrics.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        for (const metric of metrics.filter((m) => m.startsWith('ratchet_'))) expect(known, `${panel.title}: ${metric}`).toContain(metric);
      }
    }
  });
});

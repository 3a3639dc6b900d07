import { readFile } from 'node:fs/promises';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStoredMetrics } from '../../src/metrics/stored-metrics.js';
import { STALE_AT_HAND_OUT } from '../../src/store/read/run-aggregates.js';
import { runStatus } from '../../src/store/read/run-status.js';
import { runCounters } from '../../src/store/read/run-views.js';
import { listTrajectories } from '../../src/store/read/trajectory-search.js';
import { COUNTER_DEFINITIONS } from '../../src/ui/pages/runs-page.js';
import { CURVES_RUN, handOutBatch, seedCurvesRun } from '../store/curves-run.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

// One "stale" everywhere (issue 35): over η at the latest hand-out, in any batch. The run page's counter, its list
// filter, `ratchet runs status`, /metrics and the Python client's run_status give the same number, each naming it.
let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedCurvesRun(db.pool);
  // Handed out, never acknowledged: stale at hand-out, and in no acknowledged batch.
  await handOutBatch(db.pool);
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

describe('stale at hand-out', () => {
  it('is one number in the UI, its filter, runs status, /metrics and the Python client, named in each', async () => {
    const counters = await runCounters(db.pool, CURVES_RUN.runId);
    expect(counters.staleAtHandOut).toBeGreaterThan(0);
    const list = await listTrajectories(db.pool, { runId: CURVES_RUN.runId, stale: true }, { sort: 'finished', direction: 'desc' });
    expect(list.total).toEqual({ count: counters.staleAtHandOut, exact: true });
    expect(list.entries).toHaveLength(counters.staleAtHandOut);

    const status = (await runStatus(db.pool, CURVES_RUN.runId))!;
    expect(status.staleAtHandOut).toBe(counters.staleAtHandOut);
    // The acknowledged part is a part, named apart: nothing acknowledged yet.
    expect(status.staleTrajectories).toBe(0);

    const registry = new Registry();
    await registerStoredMetrics(registry, db.pool)();
    const text = await registry.metrics();
    expect(text).toContain(`ratchet_stale_at_hand_out_trajectories{run="${CURVES_RUN.runId}"} ${counters.staleAtHandOut}`);
    expect(text.split('\n').find((line) => line.startsWith('# HELP ratchet_stale_at_hand_out_trajectories'))).toContain(STALE_AT_HAND_OUT);
    expect(text.split('\n').find((line) => line.startsWith('# HELP ratchet_stale_trajectories_total'))).toContain(
      'Of ratchet_stale_at_hand_out_trajectories',
    );
    expect(COUNTER_DEFINITIONS.staleAtHandOut).toContain(STALE_AT_HAND_OUT);

    // The Python client's run_status, its very SQL (psycopg's %s as $1).
    const python = await readFile(new URL('../../python/ratchet_rollouts/store.py', import.meta.url), 'utf8');
    const sql = /async def run_status[\s\S]*?"""(SELECT r\.run_id[\s\S]*?)"""/.exec(python)![1]!.replaceAll('%s', '$1');
    const {
      rows: [row],
    } = await db.pool.query(sql, [CURVES_RUN.runId]);
    expect(Number(row.stale_at_hand_out)).toBe(counters.staleAtHandOut);
  });
});

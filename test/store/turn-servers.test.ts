import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStoredMetrics } from '../../src/metrics/stored-metrics.js';
import { readOneRunAggregates } from '../../src/store/read/run-aggregates.js';
import { turnServerRatesOf } from '../../src/store/read/run-views.js';
import { loadTrajectoryView } from '../../src/store/read/trajectory-view.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';
import { completeOnServers, storeAffinityRuns } from './run-rows.js';

// Turn affinity and the prefix cache per run (issue 27), over crafted turns written as the generate and persist
// activities write them (test/store/run-rows.ts storeAffinityRuns says what each run holds and what it adds up to).
let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await storeAffinityRuns(db.pool);
});

afterAll(async () => {
  await db?.stop();
});

describe('which server generated each turn', () => {
  it("is carried from the turn output into monitor_records with its cached tokens (NULL where unreported), a retry's replacing the attempt before", async () => {
    const { rows } = await db.pool.query(
      `SELECT trajectory_id, turn, served_by, cached_tokens FROM monitor_records WHERE run_id = 'affinity' ORDER BY trajectory_id, turn`,
    );
    expect(rows.map((r) => [r.trajectory_id, r.turn, r.served_by, r.cached_tokens])).toEqual([
      ['affinity/q1/0', 0, 'ratchet-gpu@A', 0],
      ['affinity/q1/0', 1, 'ratchet-gpu@A', 3],
      ['affinity/q1/0', 2, 'ratchet-gpu@B', null],
      ['affinity/q2/0', 0, 'ratchet-gpu@A', null],
      ['affinity/q2/0', 1, 'ratchet-gpu@A', 12],
      ['affinity/q3/0', 0, null, null],
      ['affinity/q3/0', 1, null, null],
      ['affinity/q4/0', 0, null, null],
      ['affinity/q4/0', 1, 'ratchet-gpu@A', null],
    ]);
  });

  it('shows on the trajectory view, stored and running', async () => {
    const view = await loadTrajectoryView(db.pool, 'affinity/q1/0');
    expect(view.turns.map((t) => [t.servedBy, t.cachedTokens])).toEqual([
      ['ratchet-gpu@A', 0],
      ['ratchet-gpu@A', 3],
      ['ratchet-gpu@B', null],
    ]);
    await db.pool.query(
      `INSERT INTO trajectory_prompts (trajectory_id, prompt_ids, prompt_text) VALUES ('affinity/running/0', '\\x0100000002000000', 'p')`,
    );
    await db.pool.query(
      `INSERT INTO turn_outputs (trajectory_id, turn, attempt, context_len, output_ids, output_logprobs, finish_reason, version_start, version_end, served_by, cached_tokens)
       VALUES ('affinity/running/0', 0, 1, 2, '\\x03000000', '\\x00000000', 'stop', 0, 0, 'ratchet-gpu@C', 1)`,
    );
    const running = await loadTrajectoryView(db.pool, 'affinity/running/0');
    expect(running.turns.map((t) => [t.servedBy, t.cachedTokens])).toEqual([['ratchet-gpu@C', 1]]);
    const old = await loadTrajectoryView(db.pool, 'affinity/q3/0');
    expect(old.turns.map((t) => [t.servedBy, t.cachedTokens])).toEqual([
      [null, null],
      [null, null],
    ]);
  });
});

describe("a run's turn-server counts, kept by the trigger of migration 015", () => {
  it('count later turns on their previous server and the prefix-cache tokens of the turns whose server reported them', async () => {
    const run = await readOneRunAggregates(db.pool, 'affinity');
    expect(run.turnServers).toEqual({
      laterTurns: 3,
      onPreviousServer: 2,
      cacheReportedTurns: 3,
      cachedTokens: 9,
      contextTokens: 14,
      laterCacheReportedTurns: 2,
      laterCachedTokens: 9,
      laterContextTokens: 12,
    });
    const rates = turnServerRatesOf(run);
    expect(rates.onPreviousServerShare).toBeCloseTo(2 / 3);
    expect(rates.laterPrefixCacheHitRate).toBeCloseTo(9 / 12);
    expect(rates.prefixCacheHitRate).toBeCloseTo(9 / 14);
  });

  it('agree with the same numbers computed from monitor_records', async () => {
    const {
      rows: [direct],
    } = await db.pool.query(
      `SELECT count(*) FILTER (WHERE turn >= 1 AND served_by IS NOT NULL AND previous IS NOT NULL)::int AS later,
              count(*) FILTER (WHERE turn >= 1 AND served_by = previous)::int AS same,
              sum(least(cached_tokens, prompt_len)) FILTER (WHERE cached_tokens IS NOT NULL)::int AS cached, sum(prompt_len) FILTER (WHERE cached_tokens IS NOT NULL)::int AS context
       FROM (SELECT *, lag(served_by) OVER (PARTITION BY trajectory_id ORDER BY turn) AS previous FROM monitor_records WHERE run_id = 'affinity') m`,
    );
    const { turnServers } = await readOneRunAggregates(db.pool, 'affinity');
    expect([turnServers.laterTurns, turnServers.onPreviousServer, turnServers.cachedTokens, turnServers.contextTokens]).toEqual([
      direct.later,
      direct.same,
      direct.cached,
      direct.context,
    ]);
  });

  it('leave a share unknown (null) until a turn counts toward it, and a run without servers at zero', async () => {
    const solo = turnServerRatesOf(await readOneRunAggregates(db.pool, 'solo'));
    expect(solo).toMatchObject({ laterTurns: 0, onPreviousServerShare: null, laterPrefixCacheHitRate: null, cacheReportedTurns: 1 });
    expect(solo.prefixCacheHitRate).toBeCloseTo(1 / 2);
    const none = turnServerRatesOf(await readOneRunAggregates(db.pool, 'nothing-here'));
    expect(none).toMatchObject({ laterTurns: 0, onPreviousServerShare: null, prefixCacheHitRate: null, laterPrefixCacheHitRate: null });
  });

  it('count a trajectory once, however often its steps and persist run again', async () => {
    const before = (await readOneRunAggregates(db.pool, 'affinity')).turnServers;
    // A stalled worker's late generate, judgement and persist of a stored trajectory: no working rows, nothing stored.
    await completeOnServers(db.pool, 'affinity/q1/0', [
      { servedBy: 'ratchet-gpu@Z', cachedTokens: 2 },
      { servedBy: 'ratchet-gpu@Z', cachedTokens: 6 },
    ]);
    expect((await readOneRunAggregates(db.pool, 'affinity')).turnServers).toEqual(before);
  });
});

describe('/metrics', () => {
  it('gives the counters whose ratios are the shares, by run, the cache tokens split into first and later turns', async () => {
    const registry = new Registry();
    await registerStoredMetrics(registry, db.pool)();
    const text = await registry.metrics();
    const sample = (name: string, labels: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(sample('ratchet_turns_after_first_total', 'run="affinity"')).toBe(3);
    expect(sample('ratchet_turns_on_previous_server_total', 'run="affinity"')).toBe(2);
    expect(sample('ratchet_prefix_cache_hit_tokens_total', 'run="affinity",turns="after_first"')).toBe(9);
    expect(sample('ratchet_prefix_cache_hit_tokens_total', 'run="affinity",turns="first"')).toBe(0);
    expect(sample('ratchet_prefix_cache_query_tokens_total', 'run="affinity",turns="after_first"')).toBe(12);
    expect(sample('ratchet_prefix_cache_query_tokens_total', 'run="affinity",turns="first"')).toBe(2);
    expect(sample('ratchet_prefix_cache_hit_tokens_total', 'run="solo",turns="first"')).toBe(1);
    expect(sample('ratchet_prefix_cache_query_tokens_total', 'run="solo",turns="first"')).toBe(2);
    expect(text).toContain('# TYPE ratchet_turns_on_previous_server_total counter');
  });
});

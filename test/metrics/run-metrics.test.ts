import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStatus } from '../../src/store/read/run-status.js';
import { LABELLED_RUNS, OLDER_RUNS, registerStoredMetrics } from '../../src/metrics/stored-metrics.js';
import { cancelGroups, admitGroups } from '../../src/store/write/rollout-groups.js';
import { recordSubmissions } from '../../src/store/read/run-aggregates.js';
import { runCounters } from '../../src/store/read/run-views.js';
import { STORED_VERDICTS } from '../../src/trajectory/turn-verdicts.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { complete, fail, joinedGroup, start } from '../store/run-rows.js';

// The stored metrics over a Postgres alone: what a scrape reports per run, against the run page's and `runs status`'s numbers.
let db: TestDatabase;
let scrape: () => Promise<string>;

beforeAll(async () => {
  db = await startTestDatabase();
  const registry = new Registry();
  const refresh = registerStoredMetrics(registry, db.pool);
  scrape = async () => {
    await refresh();
    return registry.metrics();
  };
});

afterAll(async () => {
  await db?.stop();
});

function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('stored metrics by run', () => {
  it('label trajectories, turns, tokens and the backlog with their run, as the run page counts them', async () => {
    await recordSubmissions(db.pool, ['alpha/q1/0', 'alpha/q2/0', 'alpha/q3/0', 'alpha/q4/0']);
    await complete(db.pool, 'alpha/q1/0', ['wrong', 'correct']);
    await fail(db.pool, 'alpha/q2/0', 'PolicyUnavailable', 'infrastructure');
    await start(db.pool, 'alpha/q3/0');
    await complete(db.pool, 'beta/q1/0', ['runtime_error']);
    const text = await scrape();
    const alpha = await runCounters(db.pool, 'alpha');
    expect(sample(text, 'ratchet_trajectories_total', 'run="alpha",status="completed",failure_type="",failure_class=""')).toBe(alpha.completed);
    expect(
      sample(text, 'ratchet_trajectories_total', 'run="alpha",status="failed",failure_type="PolicyUnavailable",failure_class="infrastructure"'),
    ).toBe(1);
    expect(sample(text, 'ratchet_turns_total', 'run="alpha",verdict="correct"')).toBe(1);
    expect(sample(text, 'ratchet_turns_total', 'run="alpha",verdict="wrong"')).toBe(1);
    expect(sample(text, 'ratchet_turns_total', 'run="beta",verdict="runtime_error"')).toBe(1);
    expect(sample(text, 'ratchet_generated_tokens_total', 'run="alpha"')).toBe(alpha.outputTokens);
    expect(sample(text, 'ratchet_submitted_trajectories_total', 'run="alpha"')).toBe(4);
    expect(sample(text, 'ratchet_queued_trajectories', 'run="alpha"')).toBe(alpha.queued);
    expect(alpha.queued).toBe(1);
    expect(sample(text, 'ratchet_running_trajectories', 'run="alpha"')).toBe(1);
  });

  it('name the verdicts a turn can really have in the help text', async () => {
    const help = (await scrape()).split('\n').find((line) => line.startsWith('# HELP ratchet_turns_total'))!;
    expect(help).toContain(`(${STORED_VERDICTS.join(', ')})`);
    expect(help).toContain('runtime_error');
    expect(help).not.toMatch(/\berror\)/);
  });

  it('count a cancelled group as cancelled, not admitted', async () => {
    const run = { runId: 'gamma', maxHeadOffpolicyness: 4, batchSize: 1, maxConcurrent: 8 };
    await joinedGroup(db.pool, run, 'a', 2);
    await admitGroups(db.pool, run.runId);
    await cancelGroups(db.pool, { groupId: 'gamma/a' });
    const text = await scrape();
    const status = (await runStatus(db.pool, 'gamma'))!;
    expect(status).toMatchObject({ cancelled: 1, running: 0 });
    expect(sample(text, 'ratchet_run_groups', 'run="gamma",state="admitted"')).toBe(0);
    expect(sample(text, 'ratchet_run_groups', 'run="gamma",state="cancelled"')).toBe(1);
    expect(sample(text, 'ratchet_run_admission_capacity', 'run="gamma"')).toBe(status.capacity);
  });

  it('keep the series bounded: runs past the most recent few are summed under one label', async () => {
    for (let i = 0; i < LABELLED_RUNS + 2; i++) await complete(db.pool, `many${i}/q/0`);
    const text = await scrape();
    const runs = new Set([...text.matchAll(/^ratchet_generated_tokens_total\{run="([^"]+)"\}/gm)].map((m) => m[1]));
    expect(runs.size).toBe(LABELLED_RUNS + 1);
    expect(runs.has(OLDER_RUNS)).toBe(true);
    // Nothing is lost: the sum over runs is every stored token.
    const total = [...text.matchAll(/^ratchet_generated_tokens_total\{run="[^"]+"\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(total).toBe(Number((await db.pool.query('SELECT sum(output_tokens) AS n FROM trajectories')).rows[0].n));
  });
});

import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgeBatch, claimBatch } from '../../src/store/write/batches.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { admitGroups, cancelGroups } from '../../src/store/write/rollout-groups.js';
import { recordSubmissions } from '../../src/store/read/run-aggregates.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { complete, fail, joinedGroup, start } from '../store/run-rows.js';
import { startUiBrowser, type UiBrowser } from './ui-browser.js';

// A Postgres holding a plain run with a backlog and a training run with a consumed batch and a cancelled group (no
// Temporal: the counters read Postgres alone), looked at in a real browser.
let db: TestDatabase;
let ui: UiBrowser;
let page: Page;
const PLAIN = Array.from({ length: 10 }, (_, i) => `backlog/q${i}/0`);
const TRAINING = { runId: 'trained', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 8 };
let batchId: string;

beforeAll(async () => {
  db = await startTestDatabase();
  // `ratchet run` records its 10 submissions before starting them; workers have started 4: 2 stored, 2 running.
  await recordSubmissions(db.pool, PLAIN);
  await complete(db.pool, PLAIN[0]!, ['wrong', 'correct']);
  await fail(db.pool, PLAIN[1]!);
  await start(db.pool, PLAIN[2]!);
  await start(db.pool, PLAIN[3]!);
  // A training run: group a finished and claimed (both samples stale at η = 0 once the version moves), b cancelled while running.
  const [a0, a1] = await joinedGroup(db.pool, TRAINING, 'a', 2);
  const [b0] = await joinedGroup(db.pool, TRAINING, 'b', 2);
  await admitGroups(db.pool, TRAINING.runId);
  await complete(db.pool, a0!);
  await complete(db.pool, a1!, ['wrong']);
  await start(db.pool, b0!);
  await publishPolicyVersion(db.pool, 1);
  batchId = (await claimBatch(db.pool, { runId: TRAINING.runId, batchSize: 1, consumer: 'test', leaseMs: 60_000 }))!.batchId;
  await cancelGroups(db.pool, { groupId: 'trained/b' });
  ui = await startUiBrowser(db.pool);
  page = ui.page;
});

afterAll(async () => {
  await ui?.close();
  await db?.stop();
});

const open = (path: string) => ui.open(path);

const counter = (name: string) => page.$eval(`[data-counter="${name}"]`, (el) => el.textContent ?? '');

describe("a run's counters in the browser", () => {
  it("show a plain run's backlog: every submitted trajectory, not only those started", async () => {
    await open('/runs/backlog');
    expect(await counter('submitted')).toBe('10');
    expect(await counter('queued')).toBe('6');
    expect(await counter('running')).toBe('2');
    expect(await counter('completed')).toBe('1');
    expect(await counter('failed')).toBe('1');
  });

  it('follow new submissions on the poll, without a reload', async () => {
    await open('/runs/backlog');
    await recordSubmissions(
      db.pool,
      Array.from({ length: 5 }, (_, i) => `backlog/late${i}/0`),
    );
    await page.waitForFunction(() => (globalThis as any).document.querySelector('[data-counter="queued"]')?.textContent === '11', {
      timeout: 15_000,
    });
    expect(await counter('submitted')).toBe('15');
  });

  it('show current throughput beside the run average', async () => {
    await open('/runs/backlog');
    // One trajectory of 6 output tokens stored within the last minute.
    expect(Number(await counter('recentTrajectoriesPerSecond'))).toBeGreaterThan(0);
    expect(Number(await counter('recentTokensPerSecond'))).toBeGreaterThan(0);
    const labels = await page.$$eval('.counter', (els) => els.map((el) => el.firstChild?.textContent?.trim()));
    expect(labels).toEqual(expect.arrayContaining(['tokens/s (run average)', 'trajectories/s (last minute)', 'tokens/s (last minute)']));
  });

  it('count consumed trajectories at acknowledgement and stale ones at hand-out, labelled as trajectories', async () => {
    await open('/runs/trained');
    expect(await page.$eval('#units', (el) => el.textContent)).toContain('Counts are trajectories unless labelled groups');
    // Claimed, not acknowledged: nothing consumed yet, but both members were over η = 0 when handed out.
    expect([await counter('consumedGroups'), await counter('consumedTrajectories'), await counter('staleAtHandOut')]).toEqual(['0', '0', '2']);
    await acknowledgeBatch(db.pool, batchId);
    await open('/runs/trained');
    expect([await counter('consumedGroups'), await counter('consumedTrajectories'), await counter('staleAtHandOut')]).toEqual(['1', '2', '2']);
  });

  it('show a group cancelled while running as cancelled on its page', async () => {
    await open(`/groups/${encodeURIComponent('trained/b')}`);
    expect(await page.$eval('main p', (el) => el.textContent)).toContain('admission cancelled');
  });

  it('list every run with its counters, the backlog included', async () => {
    await open('/');
    const row = await page.$$eval('#runs tr[data-run="backlog"] td', (cells) => cells.map((c) => c.textContent?.trim()));
    // run, kind, submitted, queued, running, completed, failed, …
    expect(row.slice(0, 7)).toEqual(['backlog', 'plain', '15', '11', '2', '1', '1']);
    const trained = await page.$$eval('#runs tr[data-run="trained"] td', (cells) => cells.map((c) => c.textContent?.trim()));
    expect(trained.slice(0, 2)).toEqual(['trained', 'training']);
  });

  it("show each run's backlog on /live, plain runs included", async () => {
    await open('/live');
    const backlog = await page.$$eval('#backlog tr[data-run="backlog"] td', (cells) => cells.map((c) => c.textContent?.trim()));
    // run, kind, submitted, queued, running, completed, failed, trajectories/s, why
    expect(backlog.slice(0, 7)).toEqual(['backlog', 'plain', '15', '11', '2', '1', '1']);
    expect(backlog[8]).toMatch(/^for a CPU worker/);
  });
});

import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORED_VERDICTS } from '../../src/trajectory/turn-verdicts.js';
import { LIST_REFRESH_MS } from '../../src/ui/pages/trajectory-list.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { RUNNING_ID, seedTrajectoryList } from '../store/trajectory-list-run.js';
import { SCREENSHOTS, startUiBrowser, type UiBrowser } from './ui-browser.js';

// Postgres alone (no Temporal): the run page's list reads stored rows and working rows.
let db: TestDatabase;
let ui: UiBrowser;
let page: Page;
const screenshots = SCREENSHOTS;
const BIG = 60;

/** `big/p<i>/0` for i < n: one trajectory a second, output tokens i, so pages and sorts are easy to tell apart. */
async function storeBig(from: number, to: number): Promise<void> {
  await db.pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, rewards, raw_rewards, successes, output_tokens, finished_at)
     SELECT 'big/p' || i || '/0', 'p' || i, 'completed', 'seed', 1, 0, '{1}', '{1}', '{t}', i, timestamptz '2026-01-01' + i * interval '1 second'
     FROM generate_series($1::int, $2::int - 1) AS i`,
    [from, to],
  );
}

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrajectoryList(db.pool);
  await storeBig(0, BIG);
  ui = await startUiBrowser(db.pool, { width: 1400, height: 900 });
  page = ui.page;
}, 60_000);

afterAll(async () => {
  await ui?.close();
  await db?.stop();
});

const open = (path: string, shot?: string) => ui.open(path, shot);

const listed = (table = 'trajectories') =>
  page.$$eval(`#${table} tr[data-trajectory]`, (rows) => rows.map((row) => row.getAttribute('data-trajectory')));
const text = (selector: string) => page.$eval(selector, (el) => el.textContent?.trim());
const submit = async () => Promise.all([page.waitForNavigation(), page.click('#filters button')]);

describe("a run's trajectory list", () => {
  it('shows per-turn verdicts with truncated turns marked, the total, and running trajectories under their whole qid', async () => {
    await open('/runs/math', 'trajectory-list');
    expect(await listed()).toEqual([
      'math/geometry/1/0',
      'math/algebra/10/1',
      'math/algebra/10/0',
      'math/algebra/3/2',
      'math/algebra/3/1',
      'math/algebra/3/0',
    ]);
    expect(
      await page.$$eval('#trajectories tr[data-trajectory="math/algebra/3/2"] td.turn-verdict', (tds) =>
        tds.map((td) => [td.getAttribute('data-verdict'), td.getAttribute('data-truncated')]),
      ),
    ).toEqual([
      ['wrong', 'false'],
      ['wrong', 'true'],
      ['wrong', 'false'],
    ]);
    expect(await text('#trajectory-total')).toBe('6');
    if (screenshots) await (await page.$('#trajectory-rows'))?.screenshot({ path: `${screenshots}/trajectory-list-rows.png` });
    expect(await listed('running-trajectories')).toEqual([RUNNING_ID]);
    expect(await text(`#running-trajectories tr[data-trajectory="${RUNNING_ID}"] td.qid`)).toBe('algebra/3');
  });

  it("offers the verdicts the run's stored turns have, runtime_error included and no error", async () => {
    const { rows } = await db.pool.query<{ verdict: string }>('SELECT DISTINCT verdict FROM monitor_records WHERE run_id = $1 ORDER BY 1', ['math']);
    const offered = await page.$$eval('#filters select[name=verdict] option', (options) =>
      options.map((o) => (o as unknown as { value: string }).value),
    );
    expect(offered).toEqual(['', ...rows.map((row) => row.verdict)]);
    expect(offered).toContain('runtime_error');
    expect(offered.every((verdict) => verdict === '' || (STORED_VERDICTS as readonly string[]).includes(verdict))).toBe(true);
    await page.select('#filters select[name=verdict]', 'runtime_error');
    await submit();
    expect(await listed()).toEqual(['math/algebra/10/0']);
  });

  it('filters truncated and stale trajectories, and by qid (a running one with a "/" qid too) or part of one', async () => {
    await open('/runs/math?truncated=1');
    expect(await listed()).toEqual(['math/algebra/3/2']);
    expect(await page.$eval('#filters input[name=truncated]', (el) => (el as unknown as { checked: boolean }).checked)).toBe(true);
    await open('/runs/train?stale=1');
    expect(await listed()).toEqual(['train/q1/2']);
    await open('/runs/math');
    await page.type('#filters input[name=qid]', 'algebra/3');
    await submit();
    expect(await listed()).toEqual(['math/algebra/3/2', 'math/algebra/3/1', 'math/algebra/3/0']);
    expect(await listed('running-trajectories')).toEqual([RUNNING_ID]);
    await open('/runs/math?qidContains=algebra/1');
    expect(await listed()).toEqual(['math/algebra/10/1', 'math/algebra/10/0']);
  });

  it('pages 50 at a time with a total, and sorts by output tokens from the column header', async () => {
    await open('/runs/big');
    expect(await text('#trajectory-total')).toBe(String(BIG));
    const first = await listed();
    expect(first).toHaveLength(50);
    expect(first[0]).toBe(`big/p${BIG - 1}/0`);
    await Promise.all([page.waitForNavigation(), page.click('#next-page')]);
    expect(await listed()).toEqual(Array.from({ length: BIG - 50 }, (_, i) => `big/p${BIG - 51 - i}/0`));
    expect(await page.$('#next-page')).toBeNull();
    await Promise.all([page.waitForNavigation(), page.click('#trajectories th[data-sort="outputTokens"] a')]);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('outputTokens');
    await Promise.all([page.waitForNavigation(), page.click('#trajectories th[data-sort="outputTokens"] a')]);
    expect((await listed()).slice(0, 3)).toEqual(['big/p0/0', 'big/p1/0', 'big/p2/0']);
  });

  it('refreshes its rows as trajectories arrive, keeping the filter and the page the user is on', async () => {
    await open('/runs/big?qidContains=p6');
    await page.evaluate(() => {
      (globalThis as any).notReloaded = true;
    });
    expect(await listed()).toEqual(['big/p6/0']);
    await storeBig(BIG, BIG + 10);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#trajectories tr[data-trajectory]').length === 11, {
      timeout: LIST_REFRESH_MS * 4,
    });
    expect((await listed()).slice(0, 2)).toEqual(['big/p69/0', 'big/p68/0']);
    expect(await text('#trajectory-total')).toBe('11');
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    expect(await page.$eval('#filters input[name=qidContains]', (el) => (el as unknown as { value: string }).value)).toBe('p6');
  });

  it("lists pass rate per problem, sortable, each linking to the problem's trajectories", async () => {
    await open('/runs/math', undefined);
    await Promise.all([page.waitForNavigation(), page.click('#problems-link')]);
    const rows = () =>
      page.$$eval('#problems tr[data-qid]', (trs) => trs.map((tr) => [tr.getAttribute('data-qid'), tr.querySelector('.pass-rate')?.textContent]));
    expect(await rows()).toEqual([
      ['algebra/3', '66.7%'],
      ['algebra/10', '50.0%'],
      ['geometry/1', '0.0%'],
    ]);
    await Promise.all([page.waitForNavigation(), page.click('#problems th[data-sort="passRate"] a')]);
    expect((await rows()).map(([qid]) => qid)).toEqual(['geometry/1', 'algebra/10', 'algebra/3']);
    await Promise.all([page.waitForNavigation(), page.click('#problems tr[data-qid="algebra/10"] a')]);
    expect(await listed()).toEqual(['math/algebra/10/1', 'math/algebra/10/0']);
  });
});

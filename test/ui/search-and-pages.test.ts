import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { startRatchetUi, type RunningUi } from '../../src/ui/server.js';
import type { TemporalAccess } from '../../src/ui/workflow-lookup.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { RUNNING_ID, seedTrajectoryList } from '../store/trajectory-list-run.js';
import { launchChromium } from '../../scripts/support/chromium.js';

// Temporal as the UI sees it, for the status panel: described workflows by id, every other id not found.
const WORKFLOWS: Record<string, { status: string; pending?: { name: string; attempt: number; failure: string }[] }> = {
  'math/algebra/3/1': { status: 'FAILED' },
  [RUNNING_ID]: { status: 'RUNNING', pending: [{ name: 'generate', attempt: 3, failure: 'inference server unavailable' }] },
  'math/algebra/10/0': { status: 'COMPLETED' },
};

function fakeTemporal(): TemporalAccess {
  const getHandle = (id: string) => ({
    describe: async () => {
      const workflow = WORKFLOWS[id];
      if (!workflow) throw new WorkflowNotFoundError(`workflow ${id} not found`, id, undefined);
      return {
        status: { name: workflow.status },
        runId: `run-of-${id}`,
        startTime: new Date('2026-01-01T00:00:00Z'),
        historyLength: 42,
        raw: {
          pendingActivities: (workflow.pending ?? []).map((p) => ({
            activityType: { name: p.name },
            state: 2,
            attempt: p.attempt,
            maximumAttempts: 0,
            lastFailure: { message: p.failure },
          })),
        },
      };
    },
    fetchHistory: async () => {
      throw new WorkflowNotFoundError('no history here', id, undefined);
    },
    query: async () => {
      throw new Error('no queries here');
    },
  });
  return { client: { workflow: { getHandle } } as unknown as Client, namespace: 'default', uiUrl: 'http://127.0.0.1:8233' };
}

let db: TestDatabase;
let plain: RunningUi;
let withTemporal: RunningUi;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrajectoryList(db.pool);
  const tokenizer = await loadModelTokenizer();
  plain = await startRatchetUi({ pool: db.pool, tokenizer, port: 0 });
  withTemporal = await startRatchetUi({ pool: db.pool, tokenizer, temporal: fakeTemporal(), port: 0 });
  browser = await launchChromium();
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await plain?.close();
  await withTemporal?.close();
  await db?.stop();
});

const text = (selector: string) => page.$eval(selector, (el) => el.textContent?.trim() ?? '');
const path = () => decodeURIComponent(new URL(page.url()).pathname + new URL(page.url()).search);

async function search(query: string, ui = plain): Promise<void> {
  if (!page.url().startsWith(ui.url)) await page.goto(ui.url);
  await page.$eval('#search input', (input) => {
    (input as unknown as { value: string }).value = '';
  });
  await page.type('#search input', query);
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
}

describe('the search box', () => {
  it('opens a run, a group or a trajectory its exact id names', async () => {
    await search('math');
    expect(path()).toBe('/runs/math');
    await search('train/q1');
    expect(path()).toBe('/groups/train/q1'); // decoded: the link encodes the slash
    await search(RUNNING_ID);
    expect(path()).toBe(`/trajectories/${RUNNING_ID}`);
  });

  it('lists every run holding a qid, with its pass rate, and problems or runs containing the text', async () => {
    await search('algebra/3');
    expect(path()).toBe('/search?q=algebra/3');
    expect(
      await page.$$eval('#qid-runs tr[data-run]', (rows) =>
        rows.map((row) => [row.getAttribute('data-run'), row.children[2]?.textContent, row.children[3]?.textContent]),
      ),
    ).toEqual([
      ['math', '33.3%', '66.7%'],
      ['other', '100.0%', '100.0%'],
    ]);
    await Promise.all([page.waitForNavigation(), page.click('#qid-runs tr[data-run="math"] a')]);
    expect(await page.$$eval('#trajectories tr[data-trajectory]', (rows) => rows.length)).toBe(3);
    await search('gebra');
    expect(await page.$$eval('#qids-containing a', (links) => links.map((a) => a.textContent))).toEqual(['algebra/10', 'algebra/3']);
    await search('ath');
    expect(await page.$$eval('#runs-containing a', (links) => links.map((a) => a.textContent))).toEqual(['math']);
  });

  it('says plainly that nothing matches an unknown id, with no guessed links', async () => {
    await search('ds-17');
    expect(await text('#no-match')).toContain('Nothing matches ds-17');
    expect(await page.$$eval('main a', (links) => links.map((a) => a.getAttribute('href')))).toEqual(['/trajectories/ds-17']);
  });
});

describe("an unknown trajectory's page", () => {
  it('says Temporal has no such workflow, links nowhere wrong, and does not poll', async () => {
    const requests: string[] = [];
    page.on('request', (request) => {
      requests.push(request.url());
    });
    await page.goto(`${withTemporal.url}/trajectories/ds-17`);
    expect(await text('#unknown-trajectory')).toContain('No such trajectory');
    expect(await page.$$eval('main a', (links) => links.map((a) => a.getAttribute('href')))).toEqual(['/search']);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(requests.filter((url) => url.includes('/stamp'))).toEqual([]);
    page.removeAllListeners('request');
  });

  it('without Temporal, checks again for a bounded time and says so', async () => {
    await page.goto(`${plain.url}/trajectories/ds-17`);
    expect(await text('#unknown-trajectory')).toContain('cannot be checked');
    expect(await text('#poll-state')).toBe('Checking again every 3 s for 2 minutes.');
    expect(await page.$$eval('main a[href^="/groups/"], main a[href^="/runs/"]', (links) => links.length)).toBe(0);
  });
});

describe('the group page', () => {
  it('shows the staleness every member was handed out with', async () => {
    await page.goto(`${plain.url}/groups/${encodeURIComponent('train/q1')}`);
    expect(await page.$$eval('#group tr.member td:last-child', (tds) => tds.map((td) => td.textContent))).toEqual(['0', '0', '0', '0']);
  });
});

describe("a trajectory's page", () => {
  it("keeps a code turn's lines and shows which test failed: the traceback, or expected against actual", async () => {
    await page.goto(`${plain.url}/trajectories/${encodeURIComponent('math/algebra/10/0')}`);
    expect(await page.$eval('section[data-turn="0"] pre.extracted', (el) => el.textContent)).toContain('print(1)\nprint(2)');
    expect(await text('section[data-turn="0"] .failed-test')).toBe('test 2 of 3');
    expect(await text('section[data-turn="0"] pre.judge-text')).toMatch(
      /^crashed: exit status 1\nTraceback[\s\S]*ZeroDivisionError: division by zero$/,
    );
    await page.goto(`${plain.url}/trajectories/${encodeURIComponent('math/algebra/10/1')}`);
    expect(await page.$eval('pre.expected', (el) => el.textContent)).toBe('1\n2');
    expect(await page.$eval('pre.actual', (el) => el.textContent)).toBe('1\n3');
  });

  it("labels the last turn's feedback as never appended, and earlier feedback as appended before the next turn", async () => {
    await page.goto(`${plain.url}/trajectories/${encodeURIComponent('math/algebra/3/0')}`);
    expect(await page.$$eval('.feedback-label', (ps) => ps.map((p) => p.textContent))).toEqual([
      'Feedback (appended as tokens before turn 2):',
      'Feedback for this verdict (never appended: the trajectory ended after this turn, so it is in no context and not trained on):',
    ]);
  });

  it("shows Temporal's own status beside the row's: run, history, pending activities with attempts, and flags disagreement", async () => {
    await page.goto(`${withTemporal.url}/trajectories/${encodeURIComponent(RUNNING_ID)}`);
    expect(await text('#workflow-status')).toBe('Running');
    expect(await text('#workflow-run-id')).toBe(`run-of-${RUNNING_ID}`);
    expect(await page.$$eval('#pending-activities tr:not(:first-child) td', (tds) => tds.map((td) => td.textContent?.trim()))).toEqual([
      'generate',
      'started',
      '3',
      'inference server unavailable',
    ]);
    await page.goto(`${withTemporal.url}/trajectories/${encodeURIComponent('math/algebra/3/1')}`);
    expect(await text('#trajectory-status')).toBe('completed');
    expect(await text('#status-disagreement')).toContain('Temporal says Failed, the row says completed');
    WORKFLOWS[RUNNING_ID] = { status: 'COMPLETED' };
    await page.goto(`${withTemporal.url}/trajectories/${encodeURIComponent(RUNNING_ID)}`);
    expect(await text('#status-disagreement')).toBe(
      'Temporal and Postgres disagree: Temporal says Completed, the row says nothing (there is no row).',
    );
  });
});

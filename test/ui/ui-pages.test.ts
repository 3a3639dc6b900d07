import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { startRatchetUi, type RunningUi } from '../../src/ui/server.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { launchChromium } from '../../scripts/support/chromium.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { CPU_TASK_QUEUE } from '../../src/task-queues.js';
import { runCli } from '../cli/run-cli.js';

// One real run (Temporal dev server, Postgres, both workers, the simulated policy) shared by every page test.
let stack: TestStack;
let stopWorkers: () => Promise<void>;
let ui: RunningUi;
let browser: Browser;
let page: Page;
const SAMPLES = 3;
const TURNS = 3;
const screenshots = process.env.RATCHET_UI_SCREENSHOTS;

beforeAll(async () => {
  stack = await startTestStack({ seed: 5 });
  stopWorkers = await stack.startWorkers();
  const results = await runRollouts(stack.client, trajectoryRequests('ui', stack.problems.slice(0, 4), SAMPLES, { turns: TURNS }));
  expect(results.every((r) => r.status === 'completed')).toBe(true);
  ui = await startRatchetUi({
    pool: stack.pool,
    tokenizer: stack.tokenizer,
    port: 0,
    temporal: { client: stack.client, namespace: 'default', uiUrl: 'http://127.0.0.1:8233' },
  });
  browser = await launchChromium();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  if (screenshots) await mkdir(screenshots, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await stopWorkers?.();
  await stack?.stop();
});

async function open(path: string, shot?: string): Promise<void> {
  const response = await page.goto(`${ui.url}${path}`, { waitUntil: 'load' });
  expect(response?.status(), await response?.text()).toBe(200);
  if (screenshots && shot) await page.screenshot({ path: `${screenshots}/${shot}.png`, fullPage: true });
}

const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');

describe('the Ratchet UI in a real browser over a real run', () => {
  it('lists the run on the runs page with the counters Postgres has', async () => {
    await open('/', 'runs');
    const row = await page.$$eval('#runs tr[data-run="ui"] td', (cells) => cells.map((c) => c.textContent?.trim()));
    // run, kind, submitted, queued, running, completed, failed, …
    expect(row.slice(0, 7)).toEqual(['ui', 'plain', '12', '0', '0', '12', '0']);
  });

  it("draws the run's charts with one point per turn and shows its trajectories", async () => {
    await open('/runs/ui', 'run');
    const points = await page.evaluate(() =>
      Object.fromEntries(Object.entries((globalThis as any).ratchetCharts).map(([id, chart]: [string, any]) => [id, chart.data[0].length])),
    );
    expect(points['chart-by-turn']).toBe(TURNS);
    expect(points['chart-over-time']).toBeGreaterThan(0);
    expect(points['chart-lengths']).toBeGreaterThan(0);
    // Nine curves (success, reward, length and truncation over time, by turn and by version), two of throughput over
    // time, three of queue, generate and verify latency over time (migration 018), and reward and success by turn by
    // the generating policy version; a plain run has no groups (no signal or advantage charts), no batches (no
    // staleness) and no trainer steps.
    expect(await page.$$eval('.chart canvas', (canvases) => canvases.length)).toBe(16);
    for (const phase of ['queue', 'generate', 'verify']) expect(points[`chart-${phase}-latency-over-time`]).toBeGreaterThan(0);
    expect(await page.$('#chart-step-parity')).toBeNull();
    const { rows } = await stack.pool.query(
      "SELECT turn, avg(success::int)::float8 AS rate FROM monitor_records WHERE trajectory_id LIKE 'ui/%' GROUP BY turn ORDER BY turn",
    );
    const drawn = await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].data[1]);
    expect(drawn).toEqual(rows.map((r) => r.rate));
    // Turns are numbered from 1 everywhere (UI, `turn N/M` details, RatchetTurn = turns done).
    expect(await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].data[0])).toEqual([1, 2, 3]);
    expect(await page.$$eval('#trajectories tr', (trs) => trs.length - 1)).toBe(12);
    await open('/runs/ui?verdict=correct');
    const correct = await stack.pool.query(
      "SELECT count(DISTINCT trajectory_id)::int AS n FROM monitor_records WHERE trajectory_id LIKE 'ui/%' AND verdict = 'correct'",
    );
    expect(await page.$$eval('#trajectories tr', (trs) => trs.length - 1)).toBe(correct.rows[0].n);
  });

  it('shows a trajectory turn by turn: decoded answer, extracted answer, verdict, feedback, versions, rewards', async () => {
    const id = 'ui/' + stack.problems[0]!.qid + '/0';
    await open(`/trajectories/${encodeURIComponent(id)}`, 'trajectory');
    const { rows: turns } = await stack.pool.query(
      'SELECT answer_text, extracted_answer, verdict, feedback_text FROM turn_texts WHERE trajectory_id = $1 ORDER BY turn',
      [id],
    );
    expect(turns).toHaveLength(TURNS);
    expect(await text('#problem')).toBe(stack.problems[0]!.problem);
    const shown = await page.$$eval('section.turn', (sections) =>
      sections.map((s) => ({
        answer: s.querySelector('pre.answer')?.textContent,
        extracted: s.querySelector('.extracted')?.textContent,
        verdict: s.querySelector('.verdict')?.textContent,
        feedback: s.querySelector('pre.feedback')?.textContent,
        strip: s.querySelector('.strip')?.getAttribute('data-tokens'),
      })),
    );
    const { rows: monitor } = await stack.pool.query('SELECT answer_len FROM monitor_records WHERE trajectory_id = $1 ORDER BY turn', [id]);
    expect(shown).toEqual(
      turns.map((t, i) => ({
        answer: t.answer_text,
        extracted: t.extracted_answer ?? '(none)',
        verdict: t.verdict,
        feedback: t.feedback_text,
        strip: String(monitor[i].answer_len),
      })),
    );
    expect(await text('#end-reason')).toContain('turns');
    expect(await page.$eval('#temporal-link', (a) => a.getAttribute('href'))).toBe(
      `http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(id)}`,
    );
  });

  it("shows a turn's tokens with the output count the trainer gets", async () => {
    const id = 'ui/' + stack.problems[1]!.qid + '/1';
    await open(`/trajectories/${encodeURIComponent(id)}/turns/1/tokens`, 'tokens');
    const { rows } = await stack.pool.query('SELECT answer_len FROM monitor_records WHERE trajectory_id = $1 AND turn = 1', [id]);
    expect(await text('#output-count')).toBe(String(rows[0].answer_len));
    expect(await page.$$eval('#tokens .output', (spans) => spans.length)).toBe(rows[0].answer_len);
  });

  it('lines up all n samples of a group', async () => {
    const groupId = 'ui/' + stack.problems[2]!.qid;
    await open(`/groups/${encodeURIComponent(groupId)}`, 'group');
    expect(await page.$$eval('#group tr.member', (trs) => trs.map((tr) => tr.getAttribute('data-sample')))).toEqual(['0', '1', '2']);
    expect(await page.$$eval('#group .advantage', (cells) => cells.length)).toBe(SAMPLES * TURNS);
  });

  it("opens a run's page once something is submitted under its name, then updates it while the run progresses", async () => {
    // Nothing submitted yet: a 404 that says so, and waits for the run to appear.
    const response = await page.goto(`${ui.url}/runs/live`, { waitUntil: 'load' });
    expect(response?.status()).toBe(404);
    expect(await text('#not-found')).toContain('No run live');
    const requests = trajectoryRequests('live', stack.problems.slice(4, 6), 2, { turns: 2 });
    await Promise.all(requests.map((request) => submitTrajectory(stack.client, request)));
    await page.waitForFunction(() => (globalThis as any).document.querySelector('[data-counter="completed"]')?.textContent === '4', {
      timeout: 60_000,
    });
    expect(page.url()).toBe(`${ui.url}/runs/live`);
    // The opened run page keeps itself current by polling.
    await page.waitForFunction(() => Number((globalThis as any).document.body.dataset.refreshed ?? 0) > 0, { timeout: 15_000 });
    expect(await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].data[0].length)).toBe(2);
  });
});

describe('a failed trajectory', () => {
  it("shows its failure type and class on its page and in its run's counters", async () => {
    // Started around the client's checks, as a Python trainer could: the workflow records the failure itself.
    const id = 'ui-bad/q/0';
    const handle = await stack.client.workflow.start('trajectory', {
      taskQueue: CPU_TASK_QUEUE,
      workflowId: id,
      args: [{ trajectoryId: id, qid: 'q', problem: 'p', gold: [] }],
    });
    await handle.result().catch(() => undefined);
    await open(`/trajectories/${encodeURIComponent(id)}`, 'failed');
    expect(await text('#trajectory-status')).toBe('failed');
    expect(await text('#failure')).toMatch(/^Failed: InvalidRequest \(data\) after 0 turns/);
    await open('/runs/ui-bad');
    expect(await text('#failed-by-type')).toBe('InvalidRequest 1');
  });
});

describe('a training run held by its staleness bound', () => {
  it("shows queued groups and why they wait on the live page, and the admitted group's admission", async () => {
    const stopController = await stack.startController();
    try {
      // η = 0 and batch size 1 at policy version 0: admission lets exactly one group run until a batch is consumed.
      const run = { runId: 'train', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 4 };
      const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
      const groups = await client.submit(run, stack.problems.slice(6, 9), { samples: 2, rollout: { turns: 1 } });
      await expect
        .poll(
          async () =>
            (await stack.pool.query("SELECT count(*)::int AS n FROM rollout_groups WHERE run_id = 'train' AND finished_at IS NOT NULL")).rows[0].n,
          { timeout: 60_000, interval: 250 },
        )
        .toBe(1);
      await open('/live', 'live');
      const queue = await page.$$eval('#queues tr', (trs) =>
        trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
      );
      expect(queue).toEqual([['train', '2', '0', '1', '0', '0', 'staleness bound: η=0 with batch size 1 at policy version 0']]);
      const {
        rows: [admitted],
      } = await stack.pool.query("SELECT group_id FROM rollout_groups WHERE run_id = 'train' AND status = 'admitted'");
      await open(`/groups/${encodeURIComponent(admitted.group_id)}`);
      expect(await page.$$eval('#group tr.member td.status', (tds) => tds.map((td) => td.textContent))).toEqual(['completed', 'completed']);
      expect(await text('main p')).toContain('admission admitted at policy version 0');
      const waiting = groups.find((g) => g.groupId !== admitted.group_id)!;
      await open(`/trajectories/${encodeURIComponent(waiting.trajectoryIds[0]!)}`);
      expect(await text('#trajectory-status')).toBe('queued');
      await client.cancel({ runId: 'train' });
    } finally {
      await stopController();
    }
  });
});

describe('ratchet show over the same run', () => {
  it("prints the conversation: problem, each turn's answer, extracted answer, verdict and feedback", async () => {
    const id = 'ui/' + stack.problems[0]!.qid + '/0';
    const result = await runCli(['show', id], { DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress });
    expect(result.code, result.stderr).toBe(0);
    const { rows } = await stack.pool.query(
      'SELECT answer_text, extracted_answer, verdict, feedback_text FROM turn_texts WHERE trajectory_id = $1 ORDER BY turn',
      [id],
    );
    expect(result.stdout).toContain(stack.problems[0]!.problem);
    let at = 0;
    for (const [t, row] of rows.entries()) {
      // In order: the turn header with its verdict, the answer, the extracted answer, the feedback.
      for (const piece of [
        `── turn ${t + 1}: ${row.verdict}`,
        row.answer_text,
        `extracted answer: ${row.extracted_answer ?? '(none)'}`,
        `feedback: ${row.feedback_text.trim()}`,
      ]) {
        const found = result.stdout.indexOf(piece, at);
        expect(found, piece).toBeGreaterThanOrEqual(at);
        at = found + piece.length;
      }
    }
    expect(result.stdout).toContain(`ended: turns after ${TURNS} turns`);
  });

  it('fails with the id named when neither Postgres nor Temporal knows the trajectory', async () => {
    const result = await runCli(['show', 'ui/no-such/0'], { DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('no trajectory ui/no-such/0');
  });
});

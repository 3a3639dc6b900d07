import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRun } from '../../src/store/write/rollout-groups.js';
import { storeCompletedTrajectory } from '../../src/store/write/trajectory-store.js';
import type { RunCurves } from '../../src/store/read/run-curves.js';
import type { ChartSpec } from '../../src/ui/training-charts.js';
import { runColour } from '../../src/ui/chart-overlay.js';
import { wilsonInterval } from '../../src/ui/wilson.js';
import { CURVES_RUN, curvesTrajectory, handOutBatch, seedCurvesRun } from '../store/curves-run.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { SCREENSHOTS, startUiBrowser, type UiBrowser } from './ui-browser.js';

// Postgres alone (no Temporal): the run page reads what migration 012's triggers keep.
let db: TestDatabase;
let ui: UiBrowser;
let page: Page;
let batchId: string;
const screenshots = SCREENSHOTS;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedCurvesRun(db.pool);
  await seedCurvesRun(db.pool, 'curves-b');
  batchId = await handOutBatch(db.pool);
  // A plain run with one trajectory, generated under version 0 in one minute; and a training run with nothing yet.
  await storeCompletedTrajectory(db.pool, curvesTrajectory('single/q/0', [{ success: true, len: 50, versionStart: 0, versionEnd: 0 }], 'single'));
  await ensureRun(db.pool, { ...CURVES_RUN, runId: 'empty' });
  ui = await startUiBrowser(db.pool);
  page = ui.page;
}, 60_000);

afterAll(async () => {
  await ui?.close();
  await db?.stop();
});

const open = (path: string, shot?: string) => ui.open(path, shot);

const drawn = (id: string) =>
  page.evaluate((chartId) => {
    const chart = (globalThis as any).ratchetCharts[chartId];
    return chart ? { data: chart.data, labels: chart.series.slice(1).map((s: { label: string }) => s.label) } : null;
  }, id);
const xRange = (id: string) =>
  page.evaluate((chartId) => {
    const { min, max } = (globalThis as any).ratchetCharts[chartId].scales.x;
    return [min, max];
  }, id);
const refreshed = () => page.evaluate(() => Number((globalThis as any).document.body.dataset.refreshed ?? 0));
const nextPoll = async () => {
  const before = await refreshed();
  await page.waitForFunction((n) => Number((globalThis as any).document.body.dataset.refreshed ?? 0) > n, { timeout: 15_000 }, before);
};

describe("the run page's charts", () => {
  it('keeps a zoom across polls, updating the zoomed chart in place with new data', async () => {
    await open('/runs/curves', 'run-charts');
    expect(await drawn('chart-by-version')).toEqual({
      data: [
        [0, 1, 2],
        [0.5, 0, 0],
        [1, null, null],
      ],
      labels: ['turn 1', 'turn 2'],
    });
    await page.evaluate(() => {
      const chart = (globalThis as any).ratchetCharts['chart-by-version'];
      chart.probe = 'the same chart';
      chart.setScale('x', { min: 0.4, max: 1.6 });
    });
    // A trajectory whose turn ends under version 3: the next poll brings a new x value.
    await storeCompletedTrajectory(db.pool, curvesTrajectory('curves/g9/0', [{ success: true, len: 8, versionStart: 3, versionEnd: 3 }]));
    await nextPoll();
    await nextPoll();
    expect((await drawn('chart-by-version'))!.data[0]).toEqual([0, 1, 2, 3]);
    expect(await xRange('chart-by-version')).toEqual([0.4, 1.6]);
    expect(await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-version'].probe)).toBe('the same chart');
    // A chart the user did not zoom follows the data.
    expect(await xRange('chart-length-by-version')).toEqual([-0.5, 3.5]);
  }, 60_000);

  it('draws success per turn across versions, one line per turn, and says how many samples each point rests on', async () => {
    await open('/runs/curves');
    const view = (await (await fetch(`${ui.url}/api/runs/curves`)).json()) as { curves: { byTurn: { samples: number }[] }; charts: ChartSpec[] };
    expect(view.curves.byTurn.map((p) => p.samples)).toEqual([5, 1]);
    expect(view.charts.find((c) => c.id === 'chart-by-version')!.counts).toEqual([
      [2, 1, 1, 1],
      [1, 0, 0, 0],
    ]);
    // Legend values carry n; every point here rests on fewer than 10 samples, so each is ringed.
    const legend = await page.evaluate(() => {
      const chart = (globalThis as any).ratchetCharts['chart-by-turn'];
      return { value: chart.series[1].value(chart, 0.4, 1, 0), marked: chart.ratchet.marked.length };
    });
    expect(legend).toEqual({ value: '0.400 · n=5 (few)', marked: 2 });
  });

  it('charts the groups with no training signal, the advantages, staleness and truncation', async () => {
    await open('/runs/curves');
    expect(await drawn('chart-no-signal-by-version')).toEqual({
      data: [
        [0, 1],
        [0, 1],
      ],
      labels: ['every sample the same R₀'],
    });
    // Advantage bars centred on zero and symmetric: −0.5 … +0.5 in 21 bars, the zero bar in the middle.
    const advantages = (await drawn('chart-advantages'))!.data as number[][];
    expect(advantages[0]!).toHaveLength(21);
    expect([advantages[0]![0], advantages[0]![10], advantages[0]![20]].map((x) => Math.round(x! * 1e6) / 1e6)).toEqual([-0.5, 0, 0.5]);
    expect([advantages[1]![0], advantages[1]![10], advantages[1]![20]]).toEqual([1, 2, 1]);
    const [lo, hi] = await xRange('chart-advantages');
    expect(lo! + hi!).toBeCloseTo(0, 9);
    // η = 1: the bar over it is drawn as stale, in its own series.
    expect(await drawn('chart-staleness')).toEqual({
      data: [
        [1, 2],
        [2, null],
        [null, 2],
      ],
      labels: ['within η = 1', 'stale (over η)'],
    });
    expect((await drawn('chart-truncation-by-version'))!.data).toEqual([
      [0, 1, 3],
      [0, 0.5, 0],
    ]);
    // Histogram bars are padded by half a bar: the edge bars are whole.
    expect(await xRange('chart-staleness')).toEqual([0.5, 2.5]);
    const lengths = await page.evaluate(() => (globalThis as any).ratchetCharts['chart-lengths'].scales.x);
    expect([lengths.min, lengths.max]).toEqual([0, 112]);
  });

  it('uses the width of a 1440-px screen: three chart columns, the headline above them', async () => {
    await page.setViewport({ width: 1440, height: 900 });
    try {
      await open('/runs/curves', 'run-page-1440');
      const tops = await page.$$eval('.charts .chart', (boxes) => boxes.slice(0, 3).map((box) => Math.round(box.getBoundingClientRect().top)));
      expect(new Set(tops).size, `chart tops ${tops.join(', ')}`).toBe(1);
      const headline = await page.$eval('#headline', (el) => el.getBoundingClientRect().bottom);
      expect(headline).toBeLessThan(tops[0]!);
    } finally {
      await page.setViewport({ width: 1280, height: 900 });
    }
  });

  it('shades each rate with its Wilson 95% interval from the samples each point rests on, named in the title', async () => {
    await open('/runs/curves');
    const view = (await (await fetch(`${ui.url}/api/runs/curves`)).json()) as { charts: ChartSpec[] };
    const banded = view.charts.filter((c) => c.styles.some((style) => style.band === 'wilson')).map((c) => c.id);
    expect(banded).toEqual(
      expect.arrayContaining(['chart-by-turn', 'chart-over-time', 'chart-by-version', 'chart-no-signal-over-time', 'chart-no-signal-by-version']),
    );
    // Means (reward, length) and shares of turns counted by trajectory have no band.
    expect(banded).not.toContain('chart-reward-over-time');
    expect(banded).not.toContain('chart-truncation-over-time');
    for (const id of banded) expect(view.charts.find((c) => c.id === id)!.title).toContain('shaded: Wilson 95% interval');
    const spec = view.charts.find((c) => c.id === 'chart-by-turn')!;
    const bands = await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].ratchet.bands);
    expect(bands.map((b: number[]) => b.slice(2).map((v) => +v.toFixed(6)))).toEqual(
      spec.y[0]!.map((p, i) => Object.values(wilsonInterval(p! * spec.counts![0]![i]!, spec.counts![0]![i]!)!).map((v) => +v.toFixed(6))),
    );
  });

  it('charts throughput over time from the stored rows (tokens per second, trajectories per minute), and latency over the same buckets', async () => {
    await open('/runs/curves');
    const view = (await (await fetch(`${ui.url}/api/runs/curves`)).json()) as { charts: ChartSpec[]; curves: RunCurves };
    const { overTime, bucketSeconds } = view.curves;
    expect(bucketSeconds).toBeGreaterThan(0);
    const tokens = view.charts.find((c) => c.id === 'chart-throughput-over-time')!;
    expect(tokens.y[0]).toEqual(overTime.map((p) => (p.meanOutputTokens === null ? null : (p.meanOutputTokens * p.samples) / bucketSeconds!)));
    expect(tokens.y[0]!.some((v) => v! > 0)).toBe(true);
    const perMinute = view.charts.find((c) => c.id === 'chart-trajectories-over-time')!;
    expect(perMinute.y[0]).toEqual(overTime.map((p) => (p.samples * 60) / bucketSeconds!));
    expect((await drawn('chart-throughput-over-time'))!.data[1]).toEqual(tokens.y[0]);
    // Queue, generate and verify latency over the same buckets, each chart naming its definition; this run's rows were
    // written without timings (as before migration 018): every point a gap, never 0, and the chart says why.
    expect(await page.$eval('#latency-note', (el) => el.textContent)).toContain('stored with the turn since migration 018');
    for (const phase of ['queue', 'generate', 'verify']) {
      const latency = view.charts.find((c) => c.id === `chart-${phase}-latency-over-time`)!;
      expect(latency.title).toContain(`${phase}: `);
      expect(latency.x).toEqual(tokens.x);
      expect(latency.y.flat().every((v) => v === null)).toBe(true);
      expect(latency.empty).toContain('keep no timings');
      expect(await page.$(`#chart-${phase}-latency-over-time`)).not.toBeNull();
    }
  });

  it('smooths lines by pooling neighbouring points weighted by their samples, on request, and back', async () => {
    await open('/runs/curves');
    const view = (await (await fetch(`${ui.url}/api/runs/curves`)).json()) as { charts: ChartSpec[] };
    const spec = view.charts.find((c) => c.id === 'chart-by-turn')!;
    const [values, counts] = [spec.y[0]!, spec.counts![0]!];
    const pooled = values.map((_, i) => {
      const window = values.map((v, j) => [v!, counts[j]!] as const).filter((_, j) => Math.abs(i - j) <= 1);
      return window.reduce((sum, [v, n]) => sum + v * n, 0) / window.reduce((sum, [, n]) => sum + n, 0);
    });
    await page.select('#smoothing', '1');
    expect((await drawn('chart-by-turn'))!.data[1]).toEqual(pooled);
    expect(await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].ratchet.spec.title)).toBe(
      'success rate by turn · shaded: Wilson 95% interval · smoothed over 3 points',
    );
    // The band of a smoothed point is the interval of the pooled rate over the pooled samples.
    const pooledN = counts.map((_, i) => counts.filter((_, j) => Math.abs(i - j) <= 1).reduce((sum, n) => sum + n!, 0));
    const smoothedBands = await page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].ratchet.bands);
    expect(smoothedBands.map((b: number[]) => b.slice(2).map((v) => +v.toFixed(6)))).toEqual(
      pooled.map((p, i) => Object.values(wilsonInterval(p * pooledN[i]!, pooledN[i]!)!).map((v) => +v.toFixed(6))),
    );
    // Kept for the next page, and undone as easily.
    await open('/runs/curves');
    expect(await page.$eval('#smoothing', (el) => (el as unknown as { value: string }).value)).toBe('1');
    await page.select('#smoothing', '0');
    expect((await drawn('chart-by-turn'))!.data[1]).toEqual(values);
  });

  it('shows the charts over one x axis on request: time, policy version or training step', async () => {
    await open('/runs/curves');
    const shown = () =>
      page.$$eval('.chart', (boxes) =>
        boxes.filter((box) => (box as unknown as { offsetParent: unknown }).offsetParent !== null).map((box) => box.id),
      );
    await page.select('#x-axis', 'version');
    const byVersion = await shown();
    expect(byVersion).toEqual(expect.arrayContaining(['chart-by-version', 'chart-reward-by-version', 'chart-lengths', 'chart-by-turn']));
    expect(byVersion).not.toContain('chart-over-time');
    expect(byVersion).not.toContain('chart-step-reward');
    await page.select('#x-axis', 'time');
    expect(await shown()).toEqual(expect.arrayContaining(['chart-over-time', 'chart-advantages']));
    expect(await shown()).not.toContain('chart-by-version');
    await page.select('#x-axis', 'all');
    expect(await shown()).toEqual(expect.arrayContaining(['chart-over-time', 'chart-by-version', 'chart-step-reward']));
  });

  it("lists the run's batches, keeping the list current, and its settings", async () => {
    await open('/runs/curves');
    const batch = await page.$$eval(`#batches tr[data-batch="${batchId}"] td`, (tds) => tds.map((td) => td.textContent?.trim()));
    expect(batch.slice(1, 6)).toEqual(['trainer-0', '2', '2', '4', '2']);
    expect(batch[8]).toBe('not yet');
    // A batch claimed while the page is open shows at the next poll.
    const second = await handOutBatch(db.pool);
    await nextPoll();
    expect(await page.$$eval('#batches tr[data-batch]', (trs) => trs.map((tr) => tr.getAttribute('data-batch')))).toEqual(
      expect.arrayContaining([batchId, second]),
    );
    expect(await page.$eval('#batch-count', (el) => el.textContent)).toBe('2');
    const settings = await page.$$eval('#run-settings tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-setting'), tr.querySelector('td')?.textContent]),
    );
    expect(settings).toEqual(
      expect.arrayContaining([
        ['kind', 'training run'],
        ['η (max_head_offpolicyness, versions)', '1'],
        ['batch size (groups)', '2'],
        ['group size (samples per prompt)', '2'],
        ['layout', 'seed'],
      ]),
    );
  });

  it('overlays a second run on the same charts, picked by name', async () => {
    await open('/runs/curves');
    await page.$eval('#compare input[name="compare"]', (input) => {
      (input as unknown as { value: string }).value = 'curves-b';
    });
    await Promise.all([page.waitForNavigation(), page.click('#compare button')]);
    expect(page.url()).toContain('/runs/curves?compare=curves-b');
    if (screenshots) await page.screenshot({ path: `${screenshots}/run-charts-compare.png`, fullPage: true });
    expect(await drawn('chart-by-turn')).toEqual({
      data: [
        [1, 2],
        [0.4, 1],
        [0.25, 1],
      ],
      labels: ['curves: success', 'curves-b: success'],
    });
    // Each run in its own colour, named in the key.
    const colours = () =>
      page.evaluate(() => (globalThis as any).ratchetCharts['chart-by-turn'].ratchet.spec.styles.map((s: { colour: string }) => s.colour));
    expect(await colours()).toEqual([runColour(0), runColour(1)]);
    expect(
      await page.$$eval('#compare-key .run-key', (keys) =>
        keys.map((k) => [k.getAttribute('data-run'), (k as unknown as { style: { color: string } }).style.color]),
      ),
    ).toEqual([
      ['curves', 'rgb(29, 95, 191)'],
      ['curves-b', 'rgb(192, 57, 43)'],
    ]);
    // The overlay survives the poll.
    await nextPoll();
    expect((await drawn('chart-by-turn'))!.labels).toEqual(['curves: success', 'curves-b: success']);
  }, 30_000);

  it('overlays more than two runs, each in a colour of its own, a measurement of a run told apart by its dash', async () => {
    await open('/runs/curves?compare=curves-b,single');
    expect((await drawn('chart-by-turn'))!.labels).toEqual(['curves: success', 'curves-b: success', 'single: success']);
    const styles = await page.evaluate(() => (globalThis as any).ratchetCharts['chart-over-time'].ratchet.spec.styles);
    expect(styles.map((s: { colour: string }) => s.colour)).toEqual([
      runColour(0),
      runColour(0),
      runColour(1),
      runColour(1),
      runColour(2),
      runColour(2),
    ]);
    expect(new Set(styles.map((s: { colour: string }) => s.colour)).size).toBe(3);
    // first turn solid, any turn dashed, in every run.
    expect(styles.map((s: { dash?: number[] }) => s.dash ?? null)).toEqual([null, [6, 3], null, [6, 3], null, [6, 3]]);
    expect(await page.$eval('#compare input[name="compare"]', (input) => (input as unknown as { value: string }).value)).toBe('curves-b,single');
    // The poll asks for all of them, and a misspelt one among them is a 404 that names it.
    await nextPoll();
    expect((await drawn('chart-by-turn'))!.labels).toHaveLength(3);
    const missing = await fetch(`${ui.url}/api/runs/curves?compare=curves-b,singel`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'No run singel to compare curves with.' });
  }, 30_000);
});

describe('a run with one version, one minute and one length', () => {
  it('centres the lone x value instead of ranging it 0–100', async () => {
    await open('/runs/single');
    expect(await xRange('chart-by-version')).toEqual([-0.5, 0.5]);
    expect(await xRange('chart-by-turn')).toEqual([0.5, 1.5]);
    const [lo, hi] = await xRange('chart-over-time');
    const t = (await drawn('chart-over-time'))!.data[0][0];
    expect([t - lo, hi - t]).toEqual([60, 60]);
    expect(await xRange('chart-lengths')).toEqual([48, 64]);
  });
});

describe('a run with nothing stored yet', () => {
  it('says what is missing in each chart, with no axes or ticks drawn', async () => {
    await open('/runs/empty', 'run-charts-empty');
    expect(await page.$$eval('.chart canvas', (canvases) => canvases.length)).toBe(0);
    const notes = await page.$$eval('.chart .empty', (ps) => ps.map((p) => p.textContent));
    expect(notes).toContain('success rate by turn: no completed trajectories yet');
    expect(notes).toContain('staleness at hand-out: no batch handed out yet');
    expect(await page.$('#no-batches')).not.toBeNull();
  });
});

import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRun } from '../../src/store/write/rollout-groups.js';
import { recordTrainingStep } from '../../src/store/write/training-steps.js';
import type { ChartSpec, RunTraining } from '../../src/ui/training-charts.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { seedTrainingRun, STEPS, TRAINING_RUN } from '../store/training-run.js';
import { startUiBrowser, type UiBrowser } from './ui-browser.js';

// A Postgres holding a training run's rows and trainer steps (no Temporal: the run page reads Postgres alone).
let db: TestDatabase;
let ui: UiBrowser;
let page: Page;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrainingRun(db.pool);
  await ensureRun(db.pool, { ...TRAINING_RUN, runId: 'untrained' });
  await ensureRun(db.pool, { ...TRAINING_RUN, runId: 'first-step' });
  await recordTrainingStep(db.pool, 'first-step', 0, 1, {
    mean_reward: 0.1,
    loss: 1,
    parity_mean_abs: 0.001,
    parity_p99_abs: 0.01,
    version_lag_mean: 0,
    version_lag_max: 0,
  });
  ui = await startUiBrowser(db.pool);
  page = ui.page;
});

afterAll(async () => {
  await ui?.close();
  await db?.stop();
});

const open = (path: string, shot?: string) => ui.open(path, shot);

/** What uPlot drew for one chart: x, then one array per series, and the series' labels. */
const drawn = (id: string) =>
  page.evaluate((chartId) => {
    const chart = (globalThis as any).ratchetCharts[chartId];
    return chart ? { data: chart.data, labels: chart.series.slice(1).map((s: { label: string }) => s.label) } : null;
  }, id);
const TRAINING_CHARTS = ['#chart-reward-by-version', '#chart-turns-by-version', '[id^="chart-step-"]'];
const cells = (selector: string) => page.$$eval(selector, (tds) => tds.map((td) => td.textContent?.trim()));

describe("a training run's page", () => {
  it('draws reward by the generating policy version and success by turn per version', async () => {
    await open('/runs/steps', 'training-run');
    expect(await drawn('chart-reward-by-version')).toEqual({
      data: [
        [0, 1, 2],
        [-0.5, 1 / 3, 1],
        [-1, 0.5, 1],
      ],
      labels: ['mean reward per turn r̄', 'mean return R₀'],
    });
    expect(await drawn('chart-turns-by-version')).toEqual({
      data: [
        [0, 1, 2],
        [0, 0.5, 1],
        [0.5, 1, null],
      ],
      labels: ['turn 1', 'turn 2'],
    });
    expect(await cells('#version-rewards tr[data-version="1"] td')).toEqual([
      '1',
      '2',
      '0.333',
      '0.500',
      '100.0%',
      '50.0%',
      '100.0%',
      '1.00 / 2',
      '50.0%',
    ]);
  });

  it("draws each step's reward, parity against the 0.02 and 0.1 bounds, and the consumed tokens' version lag against η", async () => {
    const x = STEPS.map((s) => s.step);
    const metric = (name: string) => STEPS.map((s) => s.metrics[name]);
    expect(await drawn('chart-step-reward')).toEqual({ data: [x, metric('mean_reward')], labels: ['mean reward'] });
    expect(await drawn('chart-step-parity')).toEqual({
      data: [x, metric('parity_mean_abs'), metric('parity_p99_abs'), [0.02, 0.02, 0.02], [0.1, 0.1, 0.1]],
      labels: ['mean |Δ|', 'p99 |Δ|', 'mean bound 0.02', 'p99 bound 0.1'],
    });
    // η is the run's max_head_offpolicyness (2): no step reported its own.
    expect(await drawn('chart-step-lag')).toEqual({
      data: [x, metric('version_lag_mean'), metric('version_lag_max'), [2, 2, 2]],
      labels: ['mean lag', 'max lag', 'η'],
    });
    // The training section's seven charts: reward and success by version, and five per step.
    expect(await page.$$eval(TRAINING_CHARTS.map((id) => `${id} canvas`).join(', '), (canvases) => canvases.length)).toBe(7);
  });

  it('lists the steps newest first, flagging p99 over its bound and a lag over η, other metrics kept', async () => {
    expect(await cells('#training-steps tr[data-step] td:first-child')).toEqual(['2', '1', '0']);
    expect(
      await page.$$eval('#training-steps td.flag', (tds) =>
        tds.map((td) => [td.closest('tr')?.getAttribute('data-step'), td.getAttribute('data-metric'), td.textContent]),
      ),
    ).toEqual([
      ['2', 'parity_p99_abs', '0.120'],
      ['2', 'version_lag_max', '3'],
    ]);
    expect(await cells('#training-steps tr[data-step="1"] td:last-child')).toEqual(['grad_norm 1.500']);
  });

  it('serves the same numbers as JSON', async () => {
    const view = (await (await fetch(`${ui.url}/api/runs/steps`)).json()) as { training: RunTraining; charts: ChartSpec[] };
    expect(view.training.eta).toBe(2);
    expect(view.training.steps.map((s) => [s.step, s.policyVersion, s.metrics])).toEqual(STEPS.map((s) => [s.step, s.policyVersion, s.metrics]));
    expect(view.training.byVersion.map((v) => [v.version, v.meanReturn])).toEqual([
      [0, -1],
      [1, 0.5],
      [2, 1],
    ]);
    expect(view.charts.map((c) => c.id)).toContain('chart-step-lag');
  });

  it('picks up a step recorded while the page is open', async () => {
    await open('/runs/steps');
    await recordTrainingStep(db.pool, 'steps', 3, 4, {
      mean_reward: 0.9,
      parity_mean_abs: 0.003,
      parity_p99_abs: 0.02,
      version_lag_mean: 1,
      version_lag_max: 2,
    });
    await page.waitForFunction(() => (globalThis as any).ratchetCharts['chart-step-parity']?.data[0].length === 4, { timeout: 20_000 });
    expect((await drawn('chart-step-reward'))!.data[1]).toEqual([...STEPS.map((s) => s.metrics.mean_reward), 0.9]);
  });
});

describe('a run with one step so far', () => {
  it('draws the step in the middle of its axis, not at the edge of a 0–100 range', async () => {
    await open('/runs/first-step');
    const range = (id: string) =>
      page.evaluate((chartId) => {
        const { min, max } = (globalThis as any).ratchetCharts[chartId].scales.x;
        return [min, max];
      }, id);
    for (const id of ['chart-step-reward', 'chart-step-loss', 'chart-step-parity', 'chart-step-lag']) expect(await range(id)).toEqual([-0.5, 0.5]);
  });
});

describe('a run no trainer has reported on', () => {
  it('says so instead of drawing empty charts', async () => {
    await open('/runs/untrained', 'training-run-empty');
    expect(await page.$eval('#no-training-steps', (p) => p.textContent)).toContain('No training steps recorded for this run');
    const notes = await cells(TRAINING_CHARTS.map((id) => `${id} .empty`).join(', '));
    expect(notes).toEqual([
      'reward by policy version: no completed trajectories yet',
      'success by turn and policy version: no completed trajectories yet',
      'mean reward per step: no training steps recorded yet',
      'rollouts of the policy each step published: no training steps recorded yet',
      'loss per step: no training steps recorded yet',
      'logprob parity per step: no training steps recorded yet',
      'version lag of consumed tokens: no training steps recorded yet',
    ]);
    expect(await page.$('#training-steps')).toBeNull();
    expect(await drawn('chart-step-parity')).toBeNull();
  });
});

import type pg from 'pg';
import { readRun } from '../store/rollout-groups.js';
import { runCurves, type RunCurves } from '../store/run-curves.js';
import { trainingSteps } from '../store/training-steps.js';
import { rewardsByVersion } from '../store/version-rewards.js';
import { overlayCharts } from './chart-overlay.js';
import { curveCharts } from './curve-charts.js';
import { trainingCharts, type ChartSpec, type RunTraining } from './training-charts.js';

/** What the run page's chart area draws, and the numbers behind it (the JSON API returns both). */
export interface RunChartsView {
  curves: RunCurves;
  training: RunTraining;
  /** Every chart of the page; with a compared run, both runs' curves on each. */
  charts: ChartSpec[];
  /** The compared run's numbers (`?compare=<run>`). */
  compare?: { runId: string; curves: RunCurves; training: RunTraining };
}

export async function loadRunCharts(pool: pg.Pool, runId: string, compareId?: string): Promise<RunChartsView> {
  const [shown, compared] = await Promise.all([runNumbers(pool, runId), compareId ? runNumbers(pool, compareId) : undefined]);
  const charts = chartsOf(shown);
  if (!compared || !compareId) return { ...shown, charts };
  return { ...shown, charts: overlayCharts(charts, chartsOf(compared), [runId, compareId]), compare: { runId: compareId, ...compared } };
}

async function runNumbers(pool: pg.Pool, runId: string): Promise<{ curves: RunCurves; training: RunTraining }> {
  const [curves, run, byVersion, steps] = await Promise.all([runCurves(pool, runId), readRun(pool, runId), rewardsByVersion(pool, runId), trainingSteps(pool, runId)]);
  return { curves, training: { eta: run?.maxHeadOffpolicyness ?? null, byVersion, steps } };
}

function chartsOf({ curves, training }: { curves: RunCurves; training: RunTraining }): ChartSpec[] {
  return [...curveCharts(curves, training.byVersion, training.eta), ...trainingCharts(training)];
}

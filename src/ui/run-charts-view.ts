import type pg from 'pg';
import { readRun } from '../store/write/rollout-groups.js';
import { runCurves, type RunCurves } from '../store/read/run-curves.js';
import { trainingSteps } from '../store/write/training-steps.js';
import { rewardsByVersion } from '../store/read/version-rewards.js';
import { overlayCharts } from './chart-overlay.js';
import { curveCharts } from './curve-charts.js';
import { trainingCharts, type ChartSpec, type RunTraining } from './training-charts.js';

/** What the run page's chart area draws, and the numbers behind it (the JSON API returns both). */
export interface RunChartsView {
  curves: RunCurves;
  training: RunTraining;
  /** Every chart of the page; with compared runs, every run's curves on each, one colour per run. */
  charts: ChartSpec[];
  /** The compared runs' numbers (`?compare=<run>,<run>`), in the order given; absent when none. */
  compare?: { runId: string; curves: RunCurves; training: RunTraining }[];
}

export async function loadRunCharts(pool: pg.Pool, runId: string, compareIds: readonly string[] = []): Promise<RunChartsView> {
  const [shown, ...compared] = await Promise.all([runNumbers(pool, runId), ...compareIds.map((id) => runNumbers(pool, id))]);
  const charts = chartsOf(shown!);
  if (compared.length === 0) return { ...shown!, charts };
  const others = compared.map((numbers, i) => ({ runId: compareIds[i]!, ...numbers }));
  return {
    ...shown!,
    charts: overlayCharts(
      charts,
      others.map((o) => ({ runId: o.runId, charts: chartsOf(o) })),
      runId,
    ),
    compare: others,
  };
}

async function runNumbers(pool: pg.Pool, runId: string): Promise<{ curves: RunCurves; training: RunTraining }> {
  const [curves, run, byVersion, steps] = await Promise.all([
    runCurves(pool, runId),
    readRun(pool, runId),
    rewardsByVersion(pool, runId),
    trainingSteps(pool, runId),
  ]);
  return { curves, training: { eta: run?.maxHeadOffpolicyness ?? null, byVersion, steps } };
}

function chartsOf({ curves, training }: { curves: RunCurves; training: RunTraining }): ChartSpec[] {
  return [...curveCharts(curves, training.byVersion, training.eta), ...trainingCharts(training)];
}

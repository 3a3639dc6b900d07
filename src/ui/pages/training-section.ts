import { html } from 'hono/html';
import { PARITY_BOUNDS, TRAINING_METRICS, type TrainingStep } from '../../training/training-step.js';
import type { VersionRewards } from '../../store/read/version-rewards.js';
import { fixed, type Html } from '../layout.js';
import type { ChartSpec, RunTraining } from '../training-charts.js';
import { chartBoxes } from './chart-boxes.js';

/** Steps listed under the charts, newest first: the charts carry the whole run, the table the recent numbers. */
const RECENT_STEPS = 20;
const STEP_CHART = 'chart-step-';

/**
 * The run page's training section: reward by the generating policy version, and the trainer's steps (reward, loss,
 * parity against its bounds, version lag against η). The charts are drawn by the client script from `charts`. A plain
 * `ratchet run` (no η) has no trainer: its page shows no steps section.
 */
export function trainingSection(training: RunTraining, charts: readonly ChartSpec[]): Html {
  const isStepChart = (chart: ChartSpec) => chart.id.startsWith(STEP_CHART);
  return html`<h2>Reward by policy version</h2>
<p class="muted">Completed trajectories by the policy version of their first generated token; a trajectory whose weights were
 updated mid-generation has later tokens from newer versions (spanned: last token's version − first's).</p>
${chartBoxes(charts.filter((chart) => !isStepChart(chart)))}
${versionTable(training.byVersion)}
${training.eta === null && training.steps.length === 0 ? '' : stepsPart(training, charts.filter(isStepChart))}`;
}

function stepsPart({ eta, steps }: RunTraining, charts: readonly ChartSpec[]): Html {
  const summary =
    steps.length === 0
      ? html`<p class="muted" id="no-training-steps">No training steps recorded for this run. A trainer records one per optimiser step with
 <code>record_training_step</code> (Python) or <code>recordTrainingStep</code> (TypeScript): see docs/training-steps.md.</p>`
      : html`<p class="muted">${steps.length} steps${eta === null ? '' : `, η = ${eta}`}; parity bounds: mean |Δ| ≤ ${PARITY_BOUNDS.meanAbs},
 p99 |Δ| ≤ ${PARITY_BOUNDS.p99Abs} nats.</p>`;
  return html`<h2>Training steps</h2>
${summary}
${chartBoxes(charts)}
${steps.length === 0 ? '' : stepTable(steps.slice(-RECENT_STEPS).reverse(), eta)}`;
}

function versionTable(versions: readonly VersionRewards[]): Html {
  if (versions.length === 0) return html``;
  const turns = Math.max(...versions.map((v) => v.byTurn.length));
  return html`<table id="version-rewards"><tr><th>policy version</th><th>trajectories</th><th>mean reward per turn r̄</th><th>mean return R₀</th><th>correct at any turn</th>
${Array.from({ length: turns }, (_, t) => html`<th>turn ${t + 1} success</th>`)}<th>versions spanned (mean / max)</th><th>straddling</th></tr>
${versions.map(
  (
    v,
  ) => html`<tr data-version="${v.version}"><td class="num">${v.version}</td><td class="num">${v.trajectories}</td><td class="num">${fixed(v.meanReward, 3)}</td><td class="num">${fixed(v.meanReturn, 3)}</td>
<td class="num">${percent(v.anySuccess)}</td>${Array.from({ length: turns }, (_, t) => html`<td class="num">${percent(v.byTurn.find((b) => b.turn === t)?.successRate)}</td>`)}
<td class="num">${fixed(v.meanSpan, 2)} / ${v.maxSpan}</td><td class="num">${percent(v.straddling)}</td></tr>`,
)}</table>`;
}

const STEP_COLUMNS: readonly [string, string][] = [
  ['mean_reward', 'mean reward'],
  ['loss', 'loss'],
  ['parity_mean_abs', 'mean |Δ|'],
  ['parity_p99_abs', 'p99 |Δ|'],
  ['parity_max_abs', 'max |Δ|'],
  ['ratio_outside', 'ratio outside'],
  ['version_lag_mean', 'mean lag'],
  ['version_lag_max', 'max lag'],
  ['eta', 'η'],
  ['tokens', 'tokens'],
  ['trajectories', 'trajectories'],
  ['step_seconds', 'seconds'],
];

function stepTable(steps: readonly TrainingStep[], eta: number | null): Html {
  return html`<table id="training-steps"><tr><th>step</th><th>policy version</th>${STEP_COLUMNS.map(([, label]) => html`<th>${label}</th>`)}<th>other</th></tr>
${steps.map(
  (s) => html`<tr data-step="${s.step}"><td class="num">${s.step}</td><td class="num">${s.policyVersion}</td>
${STEP_COLUMNS.map(([name]) => html`<td class="num ${outOfBounds(name, s, eta) ? 'flag' : ''}" data-metric="${name}">${metricText(s.metrics[name])}</td>`)}
<td>${Object.entries(s.metrics)
    .filter(([name]) => !(TRAINING_METRICS as readonly string[]).includes(name))
    .map(([name, value]) => `${name} ${metricText(value)}`)
    .join(', ')}</td></tr>`,
)}</table>`;
}

/** Flags a parity figure over its bound, and a maximum lag over η (as reported at the step, else the run's). */
function outOfBounds(name: string, step: TrainingStep, eta: number | null): boolean {
  const value = step.metrics[name];
  if (value === undefined) return false;
  if (name === 'parity_mean_abs') return value > PARITY_BOUNDS.meanAbs;
  if (name === 'parity_p99_abs') return value > PARITY_BOUNDS.p99Abs;
  const bound = step.metrics.eta ?? eta;
  return name === 'version_lag_max' && bound !== null && value > bound;
}

function metricText(value: number | undefined): string {
  if (value === undefined) return '–';
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 0.01 ? value.toFixed(3) : value.toExponential(2);
}

function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${(100 * value).toFixed(1)}%`;
}

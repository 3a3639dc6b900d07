import { html } from 'hono/html';
import type { RunCounters, RunListEntry } from '../../store/run-views.js';
import type { RecordedDisagreement } from '../../store/status-disagreements.js';
import { embedded, fixed, page, runHref, trajectoryHref, type Html } from '../layout.js';
import { runCharts, type RunChartsPart } from './run-charts.js';
import { trajectoryListScript } from './trajectory-list.js';

const COUNTERS: readonly (keyof RunCounters)[] = [
  'submitted', 'queued', 'running', 'completed', 'failed', 'consumedGroups', 'consumedTrajectories', 'staleTrajectories', 'outputTokens',
  'tokensPerSecond', 'recentTrajectoriesPerSecond', 'recentTokensPerSecond',
];
/** Every count is of trajectories unless its label says groups. */
const LABELS: Partial<Record<keyof RunCounters, string>> = {
  consumedGroups: 'consumed groups', consumedTrajectories: 'consumed trajectories', staleTrajectories: 'stale trajectories', outputTokens: 'output tokens',
  tokensPerSecond: 'tokens/s (run average)', recentTrajectoriesPerSecond: 'trajectories/s (last minute)', recentTokensPerSecond: 'tokens/s (last minute)',
};
const UNITS_NOTE = 'Counts are trajectories unless labelled groups. Queued: submitted, not started. Consumed and stale are counted when a consumer acknowledges a batch.';

/** `/`: the most recently active runs and plain `ratchet run` names with their counters. */
export function runsPage(runs: RunListEntry[]): Html {
  const body = html`<h1>Runs</h1>
<p class="muted" id="units">${UNITS_NOTE}</p>
<table id="runs"><tr><th>run</th><th>kind</th>${COUNTERS.map((name) => html`<th>${LABELS[name] ?? name}</th>`)}<th>failed by type</th><th>last finished</th></tr>
${runs.map(({ counters, ...entry }) => html`<tr data-run="${entry.runId}"><td><a href="${runHref(entry.runId)}">${entry.runId}</a></td><td>${entry.kind}</td>
${COUNTERS.map((name) => html`<td class="num">${counterText(counters[name])}</td>`)}<td>${failureText(counters.failedByType)}</td>
<td>${entry.lastFinishedAt?.toISOString() ?? '–'}</td></tr>`)}</table>
${runs.length === 0 ? html`<p class="muted">No runs yet: submit with <code>ratchet run</code> or <code>ratchet submit</code>.</p>` : ''}`;
  const live = runs.some(({ counters }) => counters.running + counters.queued > 0);
  return page('Runs', body, live ? 'RatchetUI.pollLive();' : '');
}

/** `/runs/<runId>`: live counters, the run's curves, reward by policy version, training steps, and its trajectories, filtered. */
export function runPage(
  runId: string, counters: RunCounters, charts: RunChartsPart, trajectories: Html,
  disagreements: { count: number; latest: RecordedDisagreement[] },
): Html {
  const live = counters.running + counters.queued > 0;
  const body = html`<h1>Run <code>${runId}</code> ${live ? html`<span class="status running">live</span>` : ''}</h1>
<div class="counters">${COUNTERS.map((name) => html`<div class="counter">${LABELS[name] ?? name}<b data-counter="${name}">${counterText(counters[name])}</b></div>`)}</div>
<p class="muted" id="units">${UNITS_NOTE}</p>
<p>Failed by type: <span id="failed-by-type">${failureText(counters.failedByType)}</span></p>
${disagreements.count > 0 ? html`<p class="flag" id="run-disagreements">Temporal and Postgres disagree on <b>${disagreements.count}</b> trajectories
 (found by the admission controller), latest: ${disagreements.latest.map((d) => html`<a href="${trajectoryHref(d.trajectoryId)}">${d.trajectoryId}</a>
 (Temporal ${d.temporalStatus}, row ${d.rowStatus ?? 'missing'}) `)}</p>` : ''}
${runCharts(charts)}
${trajectories}`;
  const script = `RatchetUI.charts(${embedded(charts.view.charts)});RatchetUI.pollRun(${embedded(runId)}, ${embedded(charts.view.compare?.runId ?? null)});${trajectoryListScript()}`;
  return page(`Run ${runId}`, body, script);
}

function counterText(value: number | null | Record<string, number>): string {
  if (value === null) return '–';
  if (typeof value === 'object') return failureText(value);
  // Small rates (a trajectory every few seconds) keep two significant digits; the poll formats them the same way.
  return Number.isInteger(value) ? String(value) : Math.abs(value) < 10 ? value.toPrecision(2) : fixed(value, 1);
}

function failureText(byType: Record<string, number>): string {
  const entries = Object.entries(byType);
  return entries.length === 0 ? 'none' : entries.map(([type, n]) => `${type} ${n}`).join(', ');
}

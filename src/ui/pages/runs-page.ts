import { html } from 'hono/html';
import type { RunCounters, RunCurves, RunListEntry } from '../../store/run-views.js';
import type { RecordedDisagreement } from '../../store/status-disagreements.js';
import type { TrajectoryFilter, TrajectoryListEntry } from '../../store/trajectory-search.js';
import { embedded, fixed, groupHref, groupOf, page, runHref, trajectoryHref, type Html } from '../layout.js';
import { trainingCharts, type RunTraining } from '../training-charts.js';
import { trainingSection } from './training-section.js';

const COUNTERS: readonly (keyof RunCounters)[] = ['submitted', 'queued', 'running', 'completed', 'failed', 'consumed', 'stale', 'outputTokens', 'tokensPerSecond'];
const LABELS: Partial<Record<keyof RunCounters, string>> = { outputTokens: 'output tokens', tokensPerSecond: 'tokens/s' };

/** `/`: every run and plain `ratchet run` name with its counters. */
export function runsPage(runs: { entry: RunListEntry; counters: RunCounters }[]): Html {
  const body = html`<h1>Runs</h1>
<table id="runs"><tr><th>run</th><th>kind</th>${COUNTERS.map((name) => html`<th>${LABELS[name] ?? name}</th>`)}<th>failed by type</th><th>last finished</th></tr>
${runs.map(({ entry, counters }) => html`<tr data-run="${entry.runId}"><td><a href="${runHref(entry.runId)}">${entry.runId}</a></td><td>${entry.kind}</td>
${COUNTERS.map((name) => html`<td class="num">${counterText(counters[name])}</td>`)}<td>${failureText(counters.failedByType)}</td>
<td>${entry.lastFinishedAt?.toISOString() ?? '–'}</td></tr>`)}</table>
${runs.length === 0 ? html`<p class="muted">No runs yet: submit with <code>ratchet run</code> or <code>ratchet submit</code>.</p>` : ''}`;
  const live = runs.some(({ counters }) => counters.running + counters.queued > 0);
  return page('Runs', body, live ? 'RatchetUI.pollLive();' : '');
}

/** `/runs/<runId>`: live counters, the run's curves, reward by policy version, training steps, and its trajectories, filtered. */
export function runPage(
  runId: string, counters: RunCounters, curves: RunCurves, filter: TrajectoryFilter, trajectories: TrajectoryListEntry[],
  disagreements: { count: number; latest: RecordedDisagreement[] }, training: RunTraining,
): Html {
  const charts = trainingCharts(training);
  const live = counters.running + counters.queued > 0;
  const body = html`<h1>Run <code>${runId}</code> ${live ? html`<span class="status running">live</span>` : ''}</h1>
<div class="counters">${COUNTERS.map((name) => html`<div class="counter">${LABELS[name] ?? name}<b data-counter="${name}">${counterText(counters[name])}</b></div>`)}</div>
<p>Failed by type: <span id="failed-by-type">${failureText(counters.failedByType)}</span></p>
${disagreements.count > 0 ? html`<p class="flag" id="run-disagreements">Temporal and Postgres disagree on <b>${disagreements.count}</b> trajectories
 (found by the admission controller), latest: ${disagreements.latest.map((d) => html`<a href="${trajectoryHref(d.trajectoryId)}">${d.trajectoryId}</a>
 (Temporal ${d.temporalStatus}, row ${d.rowStatus ?? 'missing'}) `)}</p>` : ''}
<div class="charts"><div class="chart" id="chart-by-turn"></div><div class="chart" id="chart-over-time"></div>
<div class="chart" id="chart-by-version"></div><div class="chart" id="chart-lengths"></div></div>
${trainingSection(training, charts)}
<h2>Trajectories</h2>
<form method="get" id="filters">qid <input name="qid" value="${filter.qid ?? ''}" size="12">
 verdict <select name="verdict">${options(['', 'correct', 'wrong', 'no_answer', 'timeout', 'error'], filter.verdict)}</select>
 status <select name="status">${options(['', 'completed', 'failed', 'running'], filter.status)}</select>
 failure type <input name="failureType" value="${filter.failureType ?? ''}" size="14">
 policy version <input name="policyVersion" value="${filter.policyVersion ?? ''}" size="4"> <button>filter</button></form>
<table id="trajectories"><tr><th>trajectory</th><th>group</th><th>qid</th><th>status</th><th>turns</th><th>correct turns</th><th>output tokens</th><th>failure</th><th>finished</th></tr>
${trajectories.map((t) => html`<tr><td><a href="${trajectoryHref(t.trajectoryId)}">${t.trajectoryId}</a></td><td><a href="${groupHref(groupOf(t.trajectoryId))}">group</a></td>
<td>${t.qid}</td><td class="status ${t.status}">${t.status}</td><td class="num">${t.turns}</td><td class="num">${t.successes}</td><td class="num">${t.outputTokens}</td>
<td>${t.failureType ?? ''}</td><td>${t.finishedAt?.toISOString() ?? '–'}</td></tr>`)}</table>`;
  const script = `RatchetUI.runCharts(${embedded(curves)});RatchetUI.charts(${embedded(charts)});RatchetUI.pollRun(${embedded(runId)});`;
  return page(`Run ${runId}`, body, script);
}

function counterText(value: number | null | Record<string, number>): string {
  if (value === null) return '–';
  if (typeof value === 'object') return failureText(value);
  return Number.isInteger(value) ? String(value) : fixed(value, 1);
}

function failureText(byType: Record<string, number>): string {
  const entries = Object.entries(byType);
  return entries.length === 0 ? 'none' : entries.map(([type, n]) => `${type} ${n}`).join(', ');
}

function options(values: readonly string[], selected: string | undefined): Html[] {
  return values.map((value) => html`<option value="${value}" ${value === (selected ?? '') ? 'selected' : ''}>${value || 'any'}</option>`);
}

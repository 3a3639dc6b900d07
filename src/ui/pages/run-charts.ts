import { html } from 'hono/html';
import { LISTED_BATCHES, type BatchListEntry } from '../../store/read/batch-list.js';
import type { RunSettings } from '../../store/read/run-settings.js';
import { fixed, runHref, type Html } from '../layout.js';
import type { RunChartsView } from '../run-charts-view.js';
import { MAX_COMPARED, runColour } from '../chart-overlay.js';
import { FEW_SAMPLES, type ChartSpec } from '../training-charts.js';
import { LATENCY_CHARTS } from '../curve-charts.js';
import { LATENCY_PHASES, LATENCY_SAMPLE, TURN_LATENCY } from '../../store/read/turn-latency.js';
import { chartBoxes } from './chart-boxes.js';
import { trainingSection } from './training-section.js';

/** The chart area's sections: which charts each shows, in order. */
const SECTIONS: readonly [title: string, ids: readonly string[]][] = [
  ['Is it learning?', ['chart-over-time', 'chart-reward-over-time', 'chart-by-turn', 'chart-by-version']],
  ['Training signal', ['chart-no-signal-over-time', 'chart-no-signal-by-version', 'chart-advantages']],
  [
    'Output length and truncation',
    ['chart-lengths', 'chart-length-over-time', 'chart-truncation-over-time', 'chart-length-by-version', 'chart-truncation-by-version'],
  ],
  ['Throughput and latency', ['chart-throughput-over-time', 'chart-trajectories-over-time', ...LATENCY_CHARTS]],
];
/** The latency charts' definitions, said under them once (each chart's title names its own). */
export const LATENCY_NOTE =
  `Latency per turn, stored with the turn since migration 018: ${LATENCY_PHASES.map((phase) => TURN_LATENCY[phase]).join('; ')}. ` +
  `Each point: ${LATENCY_SAMPLE}; the same figures as \`ratchet runs status\`, /metrics' ratchet_turn_latency_seconds and the Python client's run_status.`;

export interface RunChartsPart {
  runId: string;
  view: RunChartsView;
  settings: RunSettings;
  batches: { total: number; latest: BatchListEntry[] };
  /** Runs offered in the compare picker. */
  runIds: readonly string[];
}

/**
 * The run page's chart area: the compare picker, the curves by section, rewards by version and the trainer's steps,
 * staleness and batches, and the run's settings. Charts are drawn by the client script from `view.charts`; each box
 * is there even while its chart is empty, so the page's poll fills it.
 */
export function runCharts({ runId, view, settings, batches, runIds }: RunChartsPart): Html {
  const placed = new Set(SECTIONS.flatMap(([, ids]) => ids).concat('chart-staleness'));
  const byId = (ids: readonly string[]) => ids.flatMap((id) => view.charts.filter((chart) => chart.id === id));
  return html`${comparePicker(
    runId,
    (view.compare ?? []).map((c) => c.runId),
    runIds,
  )}
<p class="muted" id="few-samples-note">Legend values give n, the samples a point rests on; points resting on fewer than ${FEW_SAMPLES} are ringed.
 Charts over <select id="x-axis" onchange="RatchetUI.axis(this.value)" title="Show the charts whose x axis is this (histograms and charts by turn stay)">
<option value="all">every x axis</option><option value="time">time</option><option value="version">policy version</option><option value="step">training step</option></select>
 · smoothing <select id="smoothing" onchange="RatchetUI.smooth(this.value)" title="Each point of a line pooled with its neighbours, weighted by the samples each rests on (a smoothed rate is the rate of the pooled samples); gaps stay gaps">
<option value="0">off</option><option value="1">3 points</option><option value="3">7 points</option><option value="7">15 points</option></select></p>
${SECTIONS.map(([title, ids]) => html`<h2>${title}</h2>${chartBoxes(byId(ids))}${title === 'Throughput and latency' ? html`<p class="muted" id="latency-note">${LATENCY_NOTE}</p>` : ''}`)}
${trainingSection(
  view.training,
  view.charts.filter((chart) => !placed.has(chart.id)),
)}
<h2>Batches</h2>
${chartBoxes(byId(['chart-staleness']))}
${batchTable(batches)}
<h2>Settings</h2>
${settingsTable(settings)}`;
}

function comparePicker(runId: string, compare: readonly string[], runIds: readonly string[]): Html {
  const key = [runId, ...compare].map((id, i) => html`<span class="run-key" data-run="${id}" style="color: ${runColour(i)}">■ ${id}</span>`);
  return html`<form method="get" action="${runHref(runId)}" id="compare">compare with runs
 <input name="compare" list="compare-runs" value="${compare.join(',')}" size="30" title="One run, or up to ${MAX_COMPARED} separated by commas"><datalist id="compare-runs">${runIds.filter((id) => id !== runId).map((id) => html`<option value="${id}">`)}</datalist>
 <button>overlay</button>${compare.length > 0 ? html` <a href="${runHref(runId)}">stop comparing</a> <span class="muted" id="compare-key">each run in its colour (${key}); within a run, a line's dash tells its measurement</span>` : ''}</form>`;
}

function batchTable({ total, latest }: { total: number; latest: BatchListEntry[] }): Html {
  if (total === 0)
    return html`<p class="muted" id="no-batches">No batch handed out yet: a consumer claims one with <code>ratchet consume</code> or the client's <code>claimBatch</code>.</p>`;
  return html`<p class="muted"><span id="batch-count">${total}</span> batches, the newest ${Math.min(total, LISTED_BATCHES)} listed.</p>
<table id="batches"><tr><th>batch</th><th>consumer</th><th>policy version</th><th>groups</th><th>trajectories</th><th>stale</th><th>claimed</th><th>lease until</th><th>acknowledged</th></tr>
${latest.map(
  (
    b,
  ) => html`<tr data-batch="${b.batchId}"><td><code>${b.batchId.slice(0, 8)}</code></td><td>${b.consumer}</td><td class="num">${b.policyVersion}</td><td class="num">${b.groups}</td>
<td class="num">${b.trajectories}</td><td class="num">${b.staleTrajectories}</td><td>${b.claimedAt.toISOString()}</td><td>${b.leaseExpiresAt.toISOString()}</td>
<td>${b.ackedAt?.toISOString() ?? (b.leaseExpiresAt.getTime() < Date.now() ? 'no: lease ran out' : 'not yet')}</td></tr>`,
)}</table>`;
}

function settingsTable({ training, sampling, layout }: RunSettings): Html {
  const rows: [string, string][] = [];
  if (training) {
    rows.push(
      ['kind', 'training run'],
      ['η (max_head_offpolicyness, versions)', String(training.maxHeadOffpolicyness)],
      ['batch size (groups)', String(training.batchSize)],
      ['group size (samples per prompt)', training.groupSize === null ? '–' : String(training.groupSize)],
      ['most groups at once', String(training.maxConcurrent)],
      ['created', training.createdAt.toISOString()],
    );
  } else rows.push(['kind', 'plain run (no admission, no trainer)']);
  if (layout) rows.push(['layout', layout]);
  if (sampling) {
    rows.push(
      ['temperature', fixed(sampling.temperature, 2)],
      ['top_p', fixed(sampling.topP, 2)],
      ['top_k', sampling.topK === null ? '–' : String(sampling.topK)],
      ['min_p', fixed(sampling.minP, 2)],
      ['repetition penalty', fixed(sampling.repetitionPenalty, 2)],
    );
  }
  return html`<table id="run-settings">${rows.map(([name, value]) => html`<tr data-setting="${name}"><th>${name}</th><td>${value}</td></tr>`)}</table>
${sampling ? html`<p class="muted">Sampling as the newest stored trajectory was drawn with.</p>` : ''}`;
}

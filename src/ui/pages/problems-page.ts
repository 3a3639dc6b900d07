import { html } from 'hono/html';
import type { ProblemSort, RunProblem } from '../../store/read/run-problems.js';
import type { VersionRewards } from '../../store/read/version-rewards.js';
import { wilsonInterval, WILSON_NAME } from '../wilson.js';
import { fixed, page, runHref, type Html } from '../layout.js';
import { percentText } from './runs-page.js';

export const PROBLEM_SORTS: readonly ProblemSort[] = ['qid', 'samples', 'firstPassRate', 'passRate', 'meanReturn', 'failed'];
const LABELS: Record<ProblemSort, string> = {
  qid: 'qid',
  samples: 'samples',
  firstPassRate: 'pass at turn 1',
  passRate: 'pass any turn',
  meanReturn: 'mean return R₀',
  failed: 'failed',
};
/** What each column counts (its tooltip); the search page's table of one problem across runs uses the same. */
export const PROBLEM_COLUMN_DEFINITIONS = {
  qid: "The problem's id in its dataset.",
  samples: 'Stored samples that were attempted: cancelled ones are left out.',
  passRate: 'Samples with a correct turn over attempted samples (failed ones included, cancelled ones not); – when none was attempted.',
  firstPassRate: 'Samples whose first turn was correct over attempted samples (failed ones included, cancelled ones not); – when none was attempted.',
  meanReturn: 'Mean R₀ over attempted samples (a failed one counts 0); – when none was attempted.',
  failed: 'Attempted samples that failed (cancelled ones not included).',
  cancelled: 'Samples cancelled (their group or workflow), never counted as attempts.',
} as const;

/**
 * `/runs/<runId>/problems`: each problem's samples and pass rates (correct at turn 1; correct at any turn), sortable;
 * then the same two rates per policy version, each with its Wilson 95% interval.
 */
export function problemsPage(
  runId: string,
  problems: RunProblem[],
  count: number,
  sort: ProblemSort,
  direction: 'asc' | 'desc',
  qidContains: string | undefined,
  byVersion: readonly VersionRewards[] = [],
): Html {
  const query = (next: ProblemSort) => {
    const params = new URLSearchParams({ sort: next, dir: sort === next && direction === 'desc' ? 'asc' : 'desc' });
    if (qidContains) params.set('qidContains', qidContains);
    return `?${params.toString()}`;
  };
  const body = html`<h1>Problems of run <a href="${runHref(runId)}"><code>${runId}</code></a></h1>
<form method="get">qid contains <input name="qidContains" value="${qidContains ?? ''}" size="14"><input type="hidden" name="sort" value="${sort}">
<input type="hidden" name="dir" value="${direction}"> <button>filter</button></form>
<p><b id="problem-count">${count}</b> problems${count > problems.length ? html`, first ${problems.length} shown` : ''}. Pass at turn 1: samples whose first
 turn was correct; pass any turn: samples with a correct turn; both over attempted samples (failed ones included; cancelled samples were never attempted
 and count nowhere but under cancelled). The qid filter ignores case.</p>
<table id="problems"><tr>${PROBLEM_SORTS.map((key) => html`<th data-sort="${key}" title="${PROBLEM_COLUMN_DEFINITIONS[key]}"><a href="${query(key)}">${LABELS[key]}</a>${key === sort ? (direction === 'desc' ? ' ▼' : ' ▲') : ''}</th>`)}<th title="${PROBLEM_COLUMN_DEFINITIONS.cancelled}">cancelled</th><th>runs</th></tr>
${problems.map(
  (
    p,
  ) => html`<tr data-qid="${p.qid}"><td><a href="${runHref(runId)}?qid=${encodeURIComponent(p.qid)}">${p.qid}</a></td><td class="num">${p.samples}</td>
<td class="num first-pass-rate">${percentText(p.firstPassRate)}</td><td class="num pass-rate">${percentText(p.passRate)}</td><td class="num">${fixed(p.meanReturn)}</td><td class="num">${p.failed}</td><td class="num cancelled">${p.cancelled}</td>
<td><a href="/search?q=${encodeURIComponent(p.qid)}">all runs</a></td></tr>`,
)}</table>
${versionTable(byVersion)}`;
  return page(`Problems of ${runId}`, body);
}

/** The run's completed trajectories per policy version (of their first generated token): pass at turn 1 beside any turn. */
function versionTable(byVersion: readonly VersionRewards[]): Html | string {
  if (byVersion.length === 0) return '';
  const rate = (successes: number, n: number) => {
    const band = wilsonInterval(successes, n);
    return html`${percentText(n > 0 ? successes / n : null)}<span class="interval">${band ? ` [${(band.low * 100).toFixed(1)}, ${(band.high * 100).toFixed(1)}]` : ''}</span>`;
  };
  return html`<h2>By policy version</h2>
<p>Completed trajectories by the policy version of their first generated token (failed ones have no verdicts and are not counted here). Pass at turn 1:
 the first turn correct; pass any turn: some turn correct. In brackets, the ${WILSON_NAME} of each rate.</p>
<table id="problems-by-version"><tr><th>version</th><th>trajectories</th><th title="First turn correct, of the version's completed trajectories">pass at turn 1</th>
<th title="Some turn correct, of the version's completed trajectories">pass any turn</th></tr>
${[...byVersion].reverse().map((v) => {
  const first = v.byTurn.find((t) => t.turn === 0);
  return html`<tr data-version="${v.version}"><td class="num">${v.version}</td><td class="num">${v.trajectories}</td>
<td class="num first-pass-rate">${rate(first ? Math.round(first.successRate * first.trajectories) : 0, first?.trajectories ?? 0)}</td>
<td class="num pass-rate">${rate(Math.round(v.anySuccess * v.trajectories), v.trajectories)}</td></tr>`;
})}</table>`;
}

import { html } from 'hono/html';
import type { ProblemSort, RunProblem } from '../../store/run-problems.js';
import { fixed, page, runHref, type Html } from '../layout.js';
import { percentText } from './runs-page.js';

export const PROBLEM_SORTS: readonly ProblemSort[] = ['qid', 'samples', 'passRate', 'meanReturn', 'failed'];
const LABELS: Record<ProblemSort, string> = { qid: 'qid', samples: 'samples', passRate: 'pass rate', meanReturn: 'mean return R₀', failed: 'failed' };
/** What each column counts (its tooltip); the search page's table of one problem across runs uses the same. */
export const PROBLEM_COLUMN_DEFINITIONS = {
  qid: 'The problem\'s id in its dataset.',
  samples: 'Stored samples that were attempted: cancelled ones are left out.',
  passRate: 'Samples with a correct turn over attempted samples (failed ones included, cancelled ones not); – when none was attempted.',
  meanReturn: 'Mean R₀ over attempted samples (a failed one counts 0); – when none was attempted.',
  failed: 'Attempted samples that failed (cancelled ones not included).',
  cancelled: 'Samples cancelled (their group or workflow), never counted as attempts.',
} as const;

/** `/runs/<runId>/problems`: each problem's samples and pass rate (share of samples with a correct turn), sortable. */
export function problemsPage(runId: string, problems: RunProblem[], count: number, sort: ProblemSort, direction: 'asc' | 'desc', qidContains: string | undefined): Html {
  const query = (next: ProblemSort) => {
    const params = new URLSearchParams({ sort: next, dir: sort === next && direction === 'desc' ? 'asc' : 'desc' });
    if (qidContains) params.set('qidContains', qidContains);
    return `?${params.toString()}`;
  };
  const body = html`<h1>Problems of run <a href="${runHref(runId)}"><code>${runId}</code></a></h1>
<form method="get">qid contains <input name="qidContains" value="${qidContains ?? ''}" size="14"><input type="hidden" name="sort" value="${sort}">
<input type="hidden" name="dir" value="${direction}"> <button>filter</button></form>
<p><b id="problem-count">${count}</b> problems${count > problems.length ? html`, first ${problems.length} shown` : ''}. Pass rate: samples with a correct turn
 over attempted samples (failed ones included; cancelled samples were never attempted and count nowhere but under cancelled). The qid filter ignores case.</p>
<table id="problems"><tr>${PROBLEM_SORTS.map((key) => html`<th data-sort="${key}" title="${PROBLEM_COLUMN_DEFINITIONS[key]}"><a href="${query(key)}">${LABELS[key]}</a>${key === sort ? (direction === 'desc' ? ' ▼' : ' ▲') : ''}</th>`)}<th title="${PROBLEM_COLUMN_DEFINITIONS.cancelled}">cancelled</th><th>runs</th></tr>
${problems.map((p) => html`<tr data-qid="${p.qid}"><td><a href="${runHref(runId)}?qid=${encodeURIComponent(p.qid)}">${p.qid}</a></td><td class="num">${p.samples}</td>
<td class="num pass-rate">${percentText(p.passRate)}</td><td class="num">${fixed(p.meanReturn)}</td><td class="num">${p.failed}</td><td class="num cancelled">${p.cancelled}</td>
<td><a href="/search?q=${encodeURIComponent(p.qid)}">all runs</a></td></tr>`)}</table>`;
  return page(`Problems of ${runId}`, body);
}

import { html } from 'hono/html';
import type { IdSearchResult } from '../../store/read/id-search.js';
import type { RunProblem } from '../../store/read/run-problems.js';
import { fixed, groupHref, page, runHref, trajectoryHref, type Html } from '../layout.js';
import { PROBLEM_COLUMN_DEFINITIONS } from './problems-page.js';
import { percentText } from './runs-page.js';

/** Where the search box leads when the text names one thing exactly and nothing else: straight there. */
export function onlyMatch(result: IdSearchResult): string | null {
  const exact = [
    result.trajectory && trajectoryHref(result.trajectory),
    result.group && groupHref(result.group),
    result.run && runHref(result.run),
  ].filter((href): href is string => Boolean(href));
  const others = result.qidRuns.length + result.runsContaining.filter((run) => run !== result.run).length + result.qidsContaining.length;
  return exact.length === 1 && others === 0 ? exact[0]! : null;
}

/** `/search?q=`: everything the text names or is part of: ids, the runs holding a qid (with their pass rates). */
export function searchPage(text: string, result: IdSearchResult, qidRuns: RunProblem[]): Html {
  const exact = [
    result.trajectory ? html`<li>trajectory <a class="hit" href="${trajectoryHref(result.trajectory)}">${result.trajectory}</a></li>` : '',
    result.group ? html`<li>group <a class="hit" href="${groupHref(result.group)}">${result.group}</a></li>` : '',
    result.run ? html`<li>run <a class="hit" href="${runHref(result.run)}">${result.run}</a></li>` : '',
  ];
  const nothing =
    !result.trajectory &&
    !result.group &&
    !result.run &&
    qidRuns.length === 0 &&
    result.runsContaining.length === 0 &&
    result.qidsContaining.length === 0;
  const body = html`<h1>Search <code>${text}</code></h1>
${
  nothing
    ? html`<p id="no-match">Nothing matches <code>${text}</code>: no trajectory, group or run has this id, and no run id or qid contains it.
 A trajectory submitted a moment ago appears once its workflow starts: <a href="${trajectoryHref(text)}">look for trajectory ${text}</a>.</p>`
    : ''
}
${exact.some((item) => item !== '') ? html`<ul id="exact">${exact}</ul>` : ''}
${
  qidRuns.length > 0
    ? html`<h2>Runs with problem <code>${text}</code></h2>
<table id="qid-runs"><tr><th>run</th><th title="${PROBLEM_COLUMN_DEFINITIONS.samples}">samples</th><th title="${PROBLEM_COLUMN_DEFINITIONS.firstPassRate}">pass at turn 1</th><th title="${PROBLEM_COLUMN_DEFINITIONS.passRate}">pass any turn</th><th title="${PROBLEM_COLUMN_DEFINITIONS.meanReturn}">mean return R₀</th><th>failed</th><th title="${PROBLEM_COLUMN_DEFINITIONS.cancelled}">cancelled</th></tr>
${qidRuns.map(
  (
    p,
  ) => html`<tr data-run="${p.runId}"><td><a href="${runHref(p.runId)}?qid=${encodeURIComponent(p.qid)}">${p.runId}</a></td><td class="num">${p.samples}</td>
<td class="num">${percentText(p.firstPassRate)}</td><td class="num">${percentText(p.passRate)}</td><td class="num">${fixed(p.meanReturn)}</td><td class="num">${p.failed}</td><td class="num">${p.cancelled}</td></tr>`,
)}</table>`
    : ''
}
${result.runsContaining.length > 0 ? html`<h2>Runs whose id contains it</h2><ul id="runs-containing">${result.runsContaining.map((run) => html`<li><a href="${runHref(run)}">${run}</a></li>`)}</ul>` : ''}
${
  result.qidsContaining.length > 0
    ? html`<h2>Problems whose qid contains it</h2><ul id="qids-containing">${result.qidsContaining.map(
        (q) => html`<li><a href="/search?q=${encodeURIComponent(q.qid)}">${q.qid}</a>
 <span class="muted">in ${q.runs} run${q.runs === 1 ? '' : 's'}</span></li>`,
      )}</ul>`
    : ''
}`;
  return page(`Search ${text}`, body);
}

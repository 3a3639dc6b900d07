import { html } from 'hono/html';
import {
  PAGE_SIZE,
  type ListTotal,
  type SortKey,
  type TrajectoryFilter,
  type TrajectoryListEntry,
  type TrajectoryOrder,
  type TrajectoryPage,
} from '../../store/read/trajectory-search.js';
import { DOWNLOAD_ROWS } from '../trajectory-csv.js';
import { embedded, fixed, groupHref, groupOf, runHref, trajectoryHref, type Html } from '../layout.js';

/** What the list shows: its filters, its order, and where its page starts (a keyset cursor). All in the URL. */
export interface ListQuery {
  filter: TrajectoryFilter;
  order: TrajectoryOrder;
  after?: string;
}

/** Running trajectories (working rows), shown above the stored list: at most the run's concurrency. */
export interface RunningList {
  entries: TrajectoryListEntry[];
  count: number;
}

/** What a verdict that is not a word is filtered as: no stored turn has it, so nothing matches. */
const UNKNOWN_VERDICT = '(not a verdict)';
const SORTS: readonly SortKey[] = ['finished', 'reward', 'successes', 'outputTokens', 'turns'];
const STATUSES = ['completed', 'failed', 'running'] as const;
/** A turn's verdict in one or two characters; the cell's title spells it out. */
const VERDICT_MARKS: Record<string, string> = { correct: '✓', wrong: '✗', no_answer: '∅', timeout: 'TO', runtime_error: 'RE', '': '…' };

/** A verdict as stored: a judge's or an environment's own word (`tool_call`), never anything to escape. */
const VERDICT_WORD = /^[A-Za-z][\w.-]{0,63}$/;

/**
 * The list's state from a run page's query string; a malformed sort or status is left out (matches everything). A
 * verdict is taken as written: one no turn of the run has matches no row (the list says 0), never every row.
 */
export function parseListQuery(runId: string, query: Record<string, string>): ListQuery {
  const version = query.policyVersion ? Number(query.policyVersion) : undefined;
  const filter: TrajectoryFilter = {
    runId,
    qid: query.qid || undefined,
    qidContains: query.qidContains || undefined,
    failureType: query.failureType || undefined,
    verdict: query.verdict ? (VERDICT_WORD.test(query.verdict) ? query.verdict : UNKNOWN_VERDICT) : undefined,
    status: (STATUSES as readonly string[]).includes(query.status ?? '') ? (query.status as TrajectoryFilter['status']) : undefined,
    policyVersion: version !== undefined && Number.isInteger(version) ? version : undefined,
    stale: query.stale === '1' || undefined,
    truncated: query.truncated === '1' || undefined,
    correctThenWrong: query.correctThenWrong === '1' || undefined,
  };
  const sort = (SORTS as readonly string[]).includes(query.sort ?? '') ? (query.sort as SortKey) : 'finished';
  return { filter, order: { sort, direction: query.dir === 'asc' ? 'asc' : 'desc' }, ...(query.after ? { after: query.after } : {}) };
}

/** The query string of a list state (the run page's URL, the fragment the page re-fetches, the paging links). */
export function listSearch({ filter, order, after }: ListQuery): string {
  const params = new URLSearchParams();
  const set = (name: string, value: string | number | boolean | undefined) => {
    if (value !== undefined && value !== '' && value !== false) params.set(name, value === true ? '1' : String(value));
  };
  set('qid', filter.qid);
  set('qidContains', filter.qidContains);
  set('verdict', filter.verdict);
  set('status', filter.status);
  set('failureType', filter.failureType);
  set('policyVersion', filter.policyVersion);
  set('stale', filter.stale);
  set('truncated', filter.truncated);
  set('correctThenWrong', filter.correctThenWrong);
  if (order.sort !== 'finished') set('sort', order.sort);
  if (order.direction !== 'desc') set('dir', order.direction);
  set('after', after);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * The run page's trajectory section: filters, then the rows the page re-fetches while the run is live. `verdicts` are
 * those the run's turns carry (its per-verdict counts), so an environment's own verdicts are offered too.
 */
export function trajectoryList(runId: string, query: ListQuery, page: TrajectoryPage, running: RunningList, verdicts: readonly string[]): Html {
  const { filter, order } = query;
  return html`<h2>Trajectories</h2>
<form method="get" id="filters" action="${runHref(runId)}">qid <input name="qid" value="${filter.qid ?? ''}" size="12">
 qid contains <input title="part of the qid, whatever its case" name="qidContains" value="${filter.qidContains ?? ''}" size="10">
 verdict <select name="verdict" title="Some turn of the trajectory had this verdict; the verdicts this run's turns have">${options(['', ...new Set([...verdicts, ...(filter.verdict ? [filter.verdict] : [])])], filter.verdict)}</select>
 status <select name="status">${options(['', ...STATUSES], filter.status)}</select>
 failure type <input name="failureType" value="${filter.failureType ?? ''}" size="14">
 policy version <input name="policyVersion" value="${filter.policyVersion ?? ''}" size="4">
 <label title="Over the run's staleness bound η at its latest hand-out, in any batch (the run's &quot;stale at hand-out&quot; count)"><input type="checkbox" name="stale" value="1" ${filter.stale ? 'checked' : ''}> stale at hand-out</label>
 <label><input type="checkbox" name="truncated" value="1" ${filter.truncated ? 'checked' : ''}> truncated</label>
 <label title="A turn correct, then a later turn not correct (wrong, no answer, timeout…): the trajectory regressed"><input type="checkbox" name="correctThenWrong" value="1" ${filter.correctThenWrong ? 'checked' : ''}> ✓ then ✗</label>
 ${order.sort !== 'finished' ? html`<input type="hidden" name="sort" value="${order.sort}">` : ''}${order.direction !== 'desc' ? html`<input type="hidden" name="dir" value="${order.direction}">` : ''}
 <button>filter</button> <a href="${runHref(runId)}">clear</a> · <a id="problems-link" href="${runHref(runId)}/problems">pass rate per problem</a>
 · <a id="policy-link" href="${runHref(runId)}/policy">behaviour policy per version</a></form>
<div id="trajectory-rows" data-src="${runHref(runId)}/trajectories${listSearch(query)}">${trajectoryRows(runId, query, page, running)}</div>`;
}

/** The list's rows: running trajectories, then one keyset page of stored ones with its total and paging links. */
export function trajectoryRows(runId: string, query: ListQuery, page: TrajectoryPage, running: RunningList): Html {
  const { order } = query;
  const turns = Math.max(1, ...[...running.entries, ...page.entries].map((t) => t.verdicts.length));
  const total = page.total.estimated ? `≈${page.total.count}` : `${page.total.count}${page.total.exact ? '' : '+'}`;
  const header = (label: string, sort?: SortKey) => {
    if (!sort) return html`<th>${label}</th>`;
    const current = order.sort === sort;
    const direction = current && order.direction === 'desc' ? 'asc' : 'desc';
    const href = `${runHref(runId)}${listSearch({ filter: query.filter, order: { sort, direction } })}`;
    return html`<th data-sort="${sort}"><a href="${href}">${label}</a>${current ? (order.direction === 'desc' ? ' ▼' : ' ▲') : ''}</th>`;
  };
  const table = (
    id: string,
    entries: TrajectoryListEntry[],
    sortable: boolean,
  ) => html`<table id="${id}"><tr>${header('trajectory')}${header('group')}${header('qid')}${header('status')}
${header('turns', sortable ? 'turns' : undefined)}${Array.from({ length: turns }, (_, t) => html`<th class="turn-col">t${t + 1}</th>`)}
${header('correct turns', sortable ? 'successes' : undefined)}${header('return R₀', sortable ? 'reward' : undefined)}${header('output tokens', sortable ? 'outputTokens' : undefined)}
${header('staleness')}${header('failure')}${header('finished', sortable ? 'finished' : undefined)}</tr>
${entries.map((t) => row(t, turns))}</table>`;
  return html`${
    running.count > 0
      ? html`<h3>Running now (<span id="running-count">${running.count}</span>${running.count > running.entries.length ? html`, newest ${running.entries.length} shown` : ''})</h3>
${table('running-trajectories', running.entries, false)}`
      : ''
  }
<p>Stored: <b id="trajectory-total" data-exact="${String(page.total.exact)}">${total}</b> ${totalNote(page.total)}
 · <a id="download" href="${runHref(runId)}/trajectories.csv${listSearch({ ...query, after: undefined })}" title="These filters and this order, as CSV: at most ${DOWNLOAD_ROWS} rows">download CSV</a>
 · sorted by ${order.sort} ${order.direction === 'desc' ? 'descending' : 'ascending'} · ${PAGE_SIZE} a page, stable while new rows arrive</p>
${table('trajectories', page.entries, true)}
<p class="pager">${query.after ? html`<a id="first-page" href="${runHref(runId)}${listSearch({ ...query, after: undefined })}">« first page</a> ` : ''}
${page.next ? html`<a id="next-page" href="${runHref(runId)}${listSearch({ ...query, after: page.next })}">next page »</a>` : html`<span class="muted">last page</span>`}</p>`;
}

function totalNote(total: ListTotal): Html | string {
  if (total.exact) return '';
  if (total.estimated) return html`<span class="muted">(the planner's estimate: counting this filter exactly would read most of the run)</span>`;
  return html`<span class="muted">(counting stops at ${total.count}: this filter is checked row by row)</span>`;
}

function row(t: TrajectoryListEntry, turns: number): Html {
  const group = t.trajectoryId.includes('/') ? groupOf(t.trajectoryId) : null;
  return html`<tr data-trajectory="${t.trajectoryId}"><td><a href="${trajectoryHref(t.trajectoryId)}">${t.trajectoryId}</a></td>
<td>${group ? html`<a href="${groupHref(group)}">group</a>` : '–'}</td><td class="qid">${t.qid}</td><td class="status ${t.status}">${t.status}</td><td class="num">${t.turns}</td>
${Array.from({ length: turns }, (_, i) => verdictCell(t.verdicts[i], t.truncated[i] === true))}
<td class="num">${t.successes}</td><td class="num">${t.reward === null ? '–' : fixed(t.reward)}</td><td class="num">${t.outputTokens}</td>
<td class="num">${t.staleness ?? '–'}</td><td>${t.failureType ?? ''}</td><td>${t.finishedAt?.toISOString() ?? '–'}</td></tr>`;
}

function verdictCell(verdict: string | undefined, truncated: boolean): Html {
  if (verdict === undefined) return html`<td class="turn-verdict muted"></td>`;
  const title = `${verdict || 'not judged yet'}${truncated ? ', cut off by the length limit' : ''}`;
  return html`<td class="turn-verdict" data-verdict="${verdict}" data-truncated="${String(truncated)}" title="${title}"><span class="verdict ${verdict}">${VERDICT_MARKS[verdict] ?? verdict}${truncated ? '✂' : ''}</span></td>`;
}

/**
 * While the page is open (an idle run may get new submissions), it re-fetches its rows (same filters, same page: keyset pages never shift) every few
 * seconds and swaps them in; the form is left alone, so nothing the user typed is lost.
 */
export function trajectoryListScript(): string {
  return `(() => { const rows = document.getElementById('trajectory-rows'); if (!rows) return;
  const tick = async () => { if (!document.hidden) { const r = await fetch(rows.dataset.src).catch(() => null);
    if (r && r.ok) rows.innerHTML = await r.text(); }
    setTimeout(tick, ${embedded(LIST_REFRESH_MS)}); };
  setTimeout(tick, ${embedded(LIST_REFRESH_MS)}); })();`;
}

export const LIST_REFRESH_MS = 3000;

function options(values: readonly string[], selected: string | undefined): Html[] {
  return values.map((value) => html`<option value="${value}" ${value === (selected ?? '') ? 'selected' : ''}>${value || 'any'}</option>`);
}

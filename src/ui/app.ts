import { Hono } from 'hono';
import { html } from 'hono/html';
import type pg from 'pg';
import { activeRuns } from '../store/read/run-status.js';
import { loadGroupView } from '../store/read/group-view.js';
import { liveTrajectories } from '../store/read/live-views.js';
import { knownRuns, listRuns, runCountersAndServers } from '../store/read/run-views.js';
import { listBatches } from '../store/read/batch-list.js';
import { runHeadlineFacts } from '../store/read/run-headline.js';
import { runSettings, trainingRunIds } from '../store/read/run-settings.js';
import { runDisagreements } from '../store/write/status-disagreements.js';
import { problemAcrossRuns, runProblems, type ProblemSort } from '../store/read/run-problems.js';
import { searchIds } from '../store/read/id-search.js';
import { servedWeights, serversNow } from '../store/write/served-weights.js';
import { listRunning, listTrajectories, type TrajectoryPage } from '../store/read/trajectory-search.js';
import { loadTrajectoryView } from '../store/read/trajectory-view.js';
import { rewardsByVersion } from '../store/read/version-rewards.js';
import { policyHealth } from '../store/read/policy-health.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { Asset } from './assets.js';
import { embedded, groupHref, page, runHref, trajectoryHref } from './layout.js';
import { groupPage } from './pages/group-page.js';
import { PROBLEM_SORTS, problemsPage } from './pages/problems-page.js';
import { policyPage } from './pages/policy-page.js';
import { onlyMatch, searchPage } from './pages/search-page.js';
import { parseListQuery, trajectoryList, trajectoryRows, type ListQuery, type RunningList } from './pages/trajectory-list.js';
import { livePage } from './pages/live-page.js';
import type { RunChartsPart } from './pages/run-charts.js';
import { runPage, runsPage } from './pages/runs-page.js';
import { servedWeightsSection } from './pages/served-weights.js';
import { tokenPage } from './pages/token-page.js';
import { trajectoryPage } from './pages/trajectory-page.js';
import { loadTrajectoryDetails, trajectoryStamp } from './trajectory-details.js';
import { loadRunCharts } from './run-charts-view.js';
import { MAX_COMPARED } from './chart-overlay.js';
import { trajectoryCsvDownload } from './trajectory-csv.js';
import type { TemporalAccess } from './workflow-lookup.js';

export interface UiSources {
  pool: pg.Pool;
  tokenizer: ModelTokenizer;
  /** Optional: without it pages show what Postgres has (no problem text, no live phase, no Temporal UI link). */
  temporal?: TemporalAccess;
  assets: Map<string, Asset>;
}

/** The UI's routes: read-only pages over Postgres, and the JSON their scripts poll. Ids are URL-encoded path segments. */
export function uiApp({ pool, tokenizer, temporal, assets }: UiSources): Hono {
  const app = new Hono();
  // A page that cannot be built says why (the UI is read-only and loopback-only: the message reveals nothing new).
  app.onError((error, c) => c.text(`ratchet ui: ${error.message}`, 500));
  app.get('/', async (c) => {
    return c.html(runsPage(await listRuns(pool, 100)));
  });
  // A run id or compare target that names no run is a 404 that says which, never an empty dashboard polling for ever.
  app.use('/runs/:runId/*', async (c, next) => (await missingRun(pool, c.req.param('runId'), c.req.query('compare'))) ?? next());
  app.use('/runs/:runId', async (c, next) => (await missingRun(pool, c.req.param('runId'), c.req.query('compare'))) ?? next());
  app.use('/api/runs/:runId', async (c, next) => {
    const runId = c.req.param('runId');
    const ids = [runId, ...comparedRuns(runId, c.req.query('compare'))];
    const known = await knownRuns(pool, ids);
    const missing = ids.filter((id) => !known.has(id));
    return missing.length > 0 ? c.json({ error: notFoundText(runId, missing) }, 404) : next();
  });
  app.get('/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const [{ counters, servers, verdicts }, charts, trajectories, disagreements, headline, weightServers, weightLedger] = await Promise.all([
      runCountersAndServers(pool, runId),
      runChartsPart(pool, runId, c.req.query('compare')),
      trajectoryListOf(pool, runId, c.req.query()),
      runDisagreements(pool, runId),
      runHeadlineFacts(pool, runId),
      serversNow(pool),
      servedWeights(pool, { limit: 20 }),
    ]);
    return c.html(
      runPage(
        runId,
        counters,
        charts,
        trajectoryList(runId, ...trajectories, verdicts),
        disagreements,
        servers,
        headline,
        servedWeightsSection(weightServers, weightLedger),
      ),
    );
  });
  // The run page's trajectory rows alone, for the page to re-fetch with its own filters and page while it is open.
  app.get('/runs/:runId/trajectories', async (c) =>
    c.html(trajectoryRows(c.req.param('runId'), ...(await trajectoryListOf(pool, c.req.param('runId'), c.req.query())))),
  );
  // The filtered list as CSV (the list's filters and order, at most DOWNLOAD_ROWS rows; x-ratchet-complete: true when
  // the first page held every row, else unknown, as the rest is streamed).
  app.get('/runs/:runId/trajectories.csv', async (c) => {
    const runId = c.req.param('runId');
    // Streamed page by page (src/ui/trajectory-csv.ts): the first rows leave before the rest are read.
    const { body, rows, complete } = await trajectoryCsvDownload(pool, parseListQuery(runId, c.req.query()));
    return c.body(body, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${runId.replace(/[^\w.-]/g, '_')}-trajectories.csv"`,
      ...(rows === null ? {} : { 'x-ratchet-rows': String(rows) }),
      'x-ratchet-complete': complete,
    });
  });
  app.get('/runs/:runId/problems', async (c) => {
    const runId = c.req.param('runId');
    const sort = (PROBLEM_SORTS as readonly string[]).includes(c.req.query('sort') ?? '') ? (c.req.query('sort') as ProblemSort) : 'passRate';
    const direction = c.req.query('dir') === 'asc' ? 'asc' : 'desc';
    const qidContains = c.req.query('qidContains') || undefined;
    const [{ problems, count }, byVersion] = await Promise.all([
      runProblems(pool, runId, sort, direction, qidContains),
      rewardsByVersion(pool, runId),
    ]);
    return c.html(problemsPage(runId, problems, count, sort, direction, qidContains, byVersion));
  });
  // The behaviour policy's mean logprob (and estimated entropy, where sampling allows) per version: read on demand.
  app.get('/runs/:runId/policy', async (c) => c.html(policyPage(c.req.param('runId'), await policyHealth(pool, c.req.param('runId')))));
  // What the run page polls: `curves` and `training` hold the numbers (each point with its sample count), `charts` every
  // chart drawn from them; `?compare=<run>,<run>` overlays other runs' curves and adds their numbers as `compare`; `batches`
  // the newest batches; `servers` turn affinity and the prefix cache (shares, null until something counts).
  // Which weights each inference server serves now, and the served-weights ledger (ratchet policy status --json).
  app.get('/api/weights', async (c) => c.json({ servers: await serversNow(pool), ledger: await servedWeights(pool, { limit: 200 }) }));
  app.get('/api/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const [{ counters, servers }, charts, batches] = await Promise.all([
      runCountersAndServers(pool, runId),
      loadRunCharts(pool, runId, comparedRuns(runId, c.req.query('compare'))),
      listBatches(pool, runId),
    ]);
    return c.json({ counters, servers, ...charts, batches, live: counters.running + counters.queued > 0 });
  });
  app.get('/groups/:groupId', async (c) => {
    const group = await loadGroupView(pool, c.req.param('groupId'));
    return group ? c.html(groupPage(group)) : c.html(page('Not found', html`No group ${c.req.param('groupId')}`), 404);
  });
  app.get('/trajectories/:id', async (c) => c.html(trajectoryPage(await loadTrajectoryDetails(pool, tokenizer, temporal, c.req.param('id')))));
  app.get('/trajectories/:id/turns/:turn/tokens', async (c) => {
    const view = await loadTrajectoryView(pool, c.req.param('id'));
    const turn = Number(c.req.param('turn'));
    if (!Number.isInteger(turn) || !view.turns[turn])
      return c.html(page('Not found', html`No turn ${c.req.param('turn')} stored for ${view.trajectoryId}`), 404);
    return c.html(tokenPage(view, turn, tokenizer));
  });
  app.get('/api/trajectories/:id/stamp', async (c) => {
    const view = await loadTrajectoryView(pool, c.req.param('id'));
    return c.json({ stamp: trajectoryStamp(view), final: view.status === 'completed' || view.status === 'failed' });
  });
  app.get('/live', async (c) => {
    const [running, runs] = await Promise.all([liveTrajectories(pool), activeRuns(pool, 50)]);
    return c.html(livePage(running, runs));
  });
  // The nav's search box: straight to the one thing the text names exactly, else every match on a results page.
  app.get('/go', async (c) => {
    const text = (c.req.query('id') ?? c.req.query('q') ?? '').trim();
    if (!text) return c.redirect('/');
    const only = onlyMatch(await searchIds(pool, text));
    return c.redirect(only ?? `/search?q=${encodeURIComponent(text)}`);
  });
  app.get('/search', async (c) => {
    const text = (c.req.query('q') ?? '').trim();
    const [result, qidRuns] = await Promise.all([searchIds(pool, text), problemAcrossRuns(pool, text)]);
    return c.html(searchPage(text, result, qidRuns));
  });
  app.get('/assets/:name', (c) => {
    const asset = assets.get(c.req.param('name'));
    return asset ? c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'max-age=3600' }) : c.notFound();
  });
  return app;
}

/** The 404 page for a run id, or a compare target, that names no run; undefined when both are runs. */
async function missingRun(pool: pg.Pool, runId: string, compareQuery: string | undefined): Promise<Response | undefined> {
  const ids = [runId, ...comparedRuns(runId, compareQuery)];
  const known = await knownRuns(pool, ids);
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length === 0) return undefined;
  const body = html`<h1>Not found</h1><p id="not-found">${notFoundText(runId, missing)}</p>
${known.has(runId) ? '' : html`<p class="muted" id="awaiting">If a run of this name is submitted in the next ${AWAIT_RUN_MINUTES} minutes, this page opens it.</p>`}
<p>${known.has(runId) ? html`<a href="${runHref(runId)}">run ${runId} alone</a> · ` : ''}<a href="/search?q=${encodeURIComponent(missing[0]!)}">search for ${missing[0]}</a> · <a href="/">every run</a></p>`;
  // A run id nothing was submitted under yet may be one about to be: the page opens the run if it appears within
  // AWAIT_RUN_MINUTES, then stops asking (a misspelt id never polls for ever).
  const script = known.has(runId) ? '' : `RatchetUI.awaitRun(${embedded(runId)}, ${AWAIT_RUN_MINUTES});`;
  return new Response(String(await page('Not found', body, script)), { status: 404, headers: { 'content-type': 'text/html; charset=UTF-8' } });
}

function notFoundText(runId: string, missing: readonly string[]): string {
  return missing
    .map((id) => (id === runId ? `No run ${id}: nothing was submitted under this name.` : `No run ${id} to compare ${runId} with.`))
    .join(' ');
}

/** How long a run's 404 page waits for the run to appear before it stops asking. */
const AWAIT_RUN_MINUTES = 10;

/**
 * The runs `?compare=` names: one, or several separated by commas, in order, each once, never the shown run, at most
 * MAX_COMPARED (so a run whose id holds a comma cannot be compared).
 */
export function comparedRuns(runId: string, compare: string | undefined): string[] {
  const ids = (compare ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '' && id !== runId);
  return [...new Set(ids)].slice(0, MAX_COMPARED);
}

async function runChartsPart(pool: pg.Pool, runId: string, compare: string | undefined): Promise<RunChartsPart> {
  const [view, settings, batches, runIds] = await Promise.all([
    loadRunCharts(pool, runId, comparedRuns(runId, compare)),
    runSettings(pool, runId),
    listBatches(pool, runId),
    trainingRunIds(pool),
  ]);
  return { runId, view, settings, batches, runIds };
}

/** One page of a run's trajectory list, as its query string asks, and the running ones above it. */
async function trajectoryListOf(pool: pg.Pool, runId: string, query: Record<string, string>): Promise<[ListQuery, TrajectoryPage, RunningList]> {
  const list = parseListQuery(runId, query);
  const [stored, running] = await Promise.all([listTrajectories(pool, list.filter, list.order, list.after), listRunning(pool, list.filter)]);
  return [list, stored, running];
}

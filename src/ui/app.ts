import { Hono } from 'hono';
import { html } from 'hono/html';
import type pg from 'pg';
import { runStatus } from '../admission/run-status.js';
import { loadGroupView } from '../store/group-view.js';
import { liveTrajectories } from '../store/live-views.js';
import { readRun } from '../store/rollout-groups.js';
import { listRuns, runCounters, runCurves } from '../store/run-views.js';
import { runDisagreements } from '../store/status-disagreements.js';
import { searchTrajectories, type TrajectoryFilter } from '../store/trajectory-search.js';
import { trainingSteps } from '../store/training-steps.js';
import { loadTrajectoryView } from '../store/trajectory-view.js';
import { rewardsByVersion } from '../store/version-rewards.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { Asset } from './assets.js';
import { groupHref, page, trajectoryHref } from './layout.js';
import { groupPage } from './pages/group-page.js';
import { livePage } from './pages/live-page.js';
import { runPage, runsPage } from './pages/runs-page.js';
import { tokenPage } from './pages/token-page.js';
import { trajectoryPage } from './pages/trajectory-page.js';
import { loadTrajectoryDetails, trajectoryStamp } from './trajectory-details.js';
import { trainingCharts, type RunTraining } from './training-charts.js';
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
    const entries = (await listRuns(pool)).slice(0, 100);
    return c.html(runsPage(await Promise.all(entries.map(async (entry) => ({ entry, counters: await runCounters(pool, entry.runId) })))));
  });
  app.get('/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const filter = runFilter(runId, c.req.query());
    const [counters, curves, trajectories, disagreements, training] = await Promise.all([
      runCounters(pool, runId), runCurves(pool, runId), searchTrajectories(pool, filter), runDisagreements(pool, runId), runTraining(pool, runId),
    ]);
    return c.html(runPage(runId, counters, curves, filter, trajectories, disagreements, training));
  });
  // What the run page polls; `training` holds the numbers behind the training charts, `trainingCharts` the charts.
  app.get('/api/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const [counters, curves, training] = await Promise.all([runCounters(pool, runId), runCurves(pool, runId), runTraining(pool, runId)]);
    return c.json({ counters, curves, training, trainingCharts: trainingCharts(training), live: counters.running + counters.queued > 0 });
  });
  app.get('/groups/:groupId', async (c) => {
    const group = await loadGroupView(pool, c.req.param('groupId'));
    return group ? c.html(groupPage(group)) : c.html(page('Not found', html`No group ${c.req.param('groupId')}`), 404);
  });
  app.get('/trajectories/:id', async (c) => c.html(trajectoryPage(await loadTrajectoryDetails(pool, tokenizer, temporal, c.req.param('id')))));
  app.get('/trajectories/:id/turns/:turn/tokens', async (c) => {
    const view = await loadTrajectoryView(pool, c.req.param('id'));
    const turn = Number(c.req.param('turn'));
    if (!Number.isInteger(turn) || !view.turns[turn]) return c.html(page('Not found', html`No turn ${c.req.param('turn')} stored for ${view.trajectoryId}`), 404);
    return c.html(tokenPage(view, turn, tokenizer));
  });
  app.get('/api/trajectories/:id/stamp', async (c) => {
    const view = await loadTrajectoryView(pool, c.req.param('id'));
    return c.json({ stamp: trajectoryStamp(view), final: view.status === 'completed' || view.status === 'failed' });
  });
  app.get('/live', async (c) => {
    const runIds = (await listRuns(pool)).filter((run) => run.kind === 'training').slice(0, 50).map((run) => run.runId);
    const statuses = await Promise.all(runIds.map((runId) => runStatus(pool, runId)));
    return c.html(livePage(await liveTrajectories(pool), statuses.flatMap((status) => status ?? [])));
  });
  // The nav's search box: a trajectory id, else a group id.
  app.get('/go', async (c) => {
    const id = (c.req.query('id') ?? '').trim();
    const group = await loadGroupView(pool, id);
    return c.redirect(group && group.members.every((m) => m.trajectoryId !== id) ? groupHref(id) : trajectoryHref(id));
  });
  app.get('/assets/:name', (c) => {
    const asset = assets.get(c.req.param('name'));
    return asset ? c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'max-age=3600' }) : c.notFound();
  });
  return app;
}

async function runTraining(pool: pg.Pool, runId: string): Promise<RunTraining> {
  const [run, byVersion, steps] = await Promise.all([readRun(pool, runId), rewardsByVersion(pool, runId), trainingSteps(pool, runId)]);
  return { eta: run?.maxHeadOffpolicyness ?? null, byVersion, steps };
}

function runFilter(runId: string, query: Record<string, string>): TrajectoryFilter {
  const version = query.policyVersion ? Number(query.policyVersion) : undefined;
  const status = ['completed', 'failed', 'running'].includes(query.status ?? '') ? query.status as TrajectoryFilter['status'] : undefined;
  return {
    runId, qid: query.qid || undefined, verdict: query.verdict || undefined, status, failureType: query.failureType || undefined,
    policyVersion: version !== undefined && Number.isInteger(version) ? version : undefined,
  };
}

import { html } from 'hono/html';
import type { ActiveRun, RunStatus } from '../../store/read/run-status.js';
import type { LiveTrajectory } from '../../store/read/live-views.js';
import { fixed, page, runHref, trajectoryHref, type Html } from '../layout.js';
import { ATTEMPT_DEFINITION, attemptText, turnAttempt } from '../turn-attempt.js';

/** A turn idle this long, or retried on its queue, is flagged: a healthy turn writes a checkpoint every few seconds. */
const STUCK_SECONDS = 60;

/** `/live`: running trajectories and their phase, stuck ones flagged, every run's backlog, and each training run's queue. */
export function livePage(running: LiveTrajectory[], runs: ActiveRun[]): Html {
  const backlog = runs.filter(({ counters }) => counters.queued + counters.running > 0);
  const training = runs.flatMap(({ status }) => status ?? []);
  const body = html`<h1>Live</h1>
<h2>Running trajectories (${running.length})</h2>
<table id="live"><tr><th>trajectory</th><th>phase</th><th>turn</th><th>tokens so far</th><th title="${ATTEMPT_DEFINITION}">attempt</th><th>idle (s)</th><th></th></tr>
${running.map((t) => row(t))}</table>
<h2>Backlog by run (trajectories)</h2>
<table id="backlog"><tr><th>run</th><th>kind</th><th>submitted</th><th>queued</th><th>running</th><th>completed</th><th>failed</th><th>trajectories/s (last minute)</th><th>why they wait</th></tr>
${backlog.map(
  ({
    aggregates: run,
    counters,
    status,
  }) => html`<tr data-run="${run.runId}"><td><a href="${runHref(run.runId)}">${run.runId}</a></td><td>${run.kind}</td>
<td class="num">${counters.submitted}</td><td class="num">${counters.queued}</td><td class="num">${counters.running}</td><td class="num">${counters.completed}</td>
<td class="num">${counters.failed}</td><td class="num">${fixed(counters.recentTrajectoriesPerSecond, 1)}</td>
<td>${counters.queued === 0 ? 'nothing waits' : status ? whyWaiting(status) : 'for a CPU worker: plain runs start as workers take workflows from the task queue'}</td></tr>`,
)}</table>
${backlog.length === 0 ? html`<p class="muted">Nothing queued or running.</p>` : ''}
<h2>Queued groups by run</h2>
<table id="queues"><tr><th>run</th><th>waiting groups</th><th>running</th><th>accepted</th><th>capacity now</th><th>policy version</th><th>why they wait</th></tr>
${training.map(
  (run) => html`<tr><td><a href="${runHref(run.runId)}">${run.runId}</a></td><td class="num">${run.waiting}</td><td class="num">${run.running}</td>
<td class="num">${run.accepted}</td><td class="num">${run.capacity}</td><td class="num">${run.policyVersion}</td><td>${whyWaiting(run)}</td></tr>`,
)}</table>`;
  return page('Live', body, 'RatchetUI.pollLive();');
}

function row(t: LiveTrajectory): Html {
  const retried = turnAttempt(t.storedAttempt).attempt > 1;
  return html`<tr><td><a href="${trajectoryHref(t.trajectoryId)}">${t.trajectoryId}</a></td><td>${t.phase}</td><td class="num">${t.turn + 1}</td>
<td class="num">${t.tokens}</td><td class="num attempt">${attemptText(t.storedAttempt)}</td><td class="num">${fixed(t.idleSeconds, 0)}</td>
<td>${retried || t.idleSeconds > STUCK_SECONDS ? html`<span class="flag">${retried ? 'retried' : 'idle'}</span>` : ''}</td></tr>`;
}

function whyWaiting(run: RunStatus): string {
  if (run.waiting === 0) return 'nothing waits';
  if (run.capacity > 0) return `admission will start ${run.capacity} now`;
  if (run.running >= run.maxConcurrent) return `at max_concurrent (${run.maxConcurrent} groups running)`;
  return `staleness bound: η=${run.maxHeadOffpolicyness} with batch size ${run.batchSize} at policy version ${run.policyVersion}`;
}

import { html } from 'hono/html';
import { embedded, fixed, groupHref, groupOf, page, runHref, trajectoryHref, type Html } from '../layout.js';
import { trajectoryStamp, type TrajectoryDetails } from '../trajectory-details.js';
import type { TrajectoryView, TurnView } from '../../store/read/trajectory-view.js';
import { attemptText } from '../turn-attempt.js';
import { verdictDetailParts } from '../verdict-detail.js';
import { observationsSection } from './observations.js';
import type { WorkflowDescription } from '../workflow-lookup.js';
import type { AnswerParts } from '../answer-parts.js';
import { versionStrip } from './version-strip.js';
import { duration, turnTimings } from '../turn-timings.js';
import { agentTurn } from '../agent-turns.js';
import { agentTurnBody, forkMarker } from './agent-turn.js';

/** /trajectories/<id>: the problem, then each turn as the model, the verifier and the feedback saw it. */
export function trajectoryPage(details: TrajectoryDetails): Html {
  const { view } = details;
  const id = view.trajectoryId;
  const final = view.status === 'completed' || view.status === 'failed';
  // An id nothing knows gets no run or group links: they would be guesses (`ds-17` is no group `ds-1`).
  const known = view.status !== 'unknown' || details.workflow.runId !== null;
  const group = view.groupId ?? (id.includes('/') ? groupOf(id) : null);
  const body = html`
<h1>Trajectory <code>${id}</code></h1>
<p><span class="status ${view.status}" id="trajectory-status">${view.status}</span>
 · Temporal <span class="status ${workflowClass(details.temporalStatus)}" id="workflow-status">${details.temporalStatus}</span>
 · qid <b>${view.qid ?? '–'}</b>${environmentPart(view, known)}${known && id.includes('/') ? html` · run <a href="${runHref(id.split('/')[0]!)}">${id.split('/')[0]}</a>` : ''}
 ${known && group ? html` · group <a href="${groupHref(group)}">${group}</a>` : ''}
 ${view.layout ? html` · layout ${view.layout}` : ''}${view.staleness !== null ? html` · staleness ${view.staleness}` : ''}
 ${details.temporalUrl && known ? html` · <a id="temporal-link" href="${details.temporalUrl}" target="_blank" rel="noreferrer">open in Temporal UI</a>` : ''}</p>
${agreementLine(details)}
${endLine(details)}
${view.status === 'unknown' ? '' : workflowPanel(details.workflow, details.temporalUrl)}
${
  details.problem
    ? html`<h2>Problem</h2><pre id="problem">
${details.problem.problem}</pre>${goldLine(details.problem.gold)}`
    : ''
}
<details><summary>Rendered prompt (${view.promptIds.length} tokens)</summary><pre>${details.promptText}</pre></details>
${view.turns.map((turn, t) => {
  // An agent program's turn (its info holds the reply the program got) shows the call; any other turn as it always did.
  const agent = agentTurn(turn);
  if (agent === null) return turnSection(id, turn, details.answers[t]!, view, t);
  const body = agentTurnBody(turn, agent, details.answers[t]!, view, t);
  return html`${turnSection(id, turn, details.answers[t]!, view, t, body)}${forkMarker(agent, turn)}`;
})}
${
  view.generating
    ? html`<div class="turn" id="generating"><h3>Turn ${view.generating.turn + 1} · generating (attempt ${attemptText(view.generating.attempt)}, ${view.generating.ids.length} tokens so far)</h3>
<pre>${details.generatingText}</pre>${versionStrip(view.generating.versions)}</div>`
    : ''
}
${details.live ? html`<p class="muted" id="live-phase">Workflow: ${details.live.phase}, turn ${details.live.turn + 1}/${details.live.turns}</p>` : ''}`;
  return page(`Trajectory ${id}`, body, final ? '' : pollScript(details));
}

/** How long a page for an id Postgres does not know checks again, where Temporal cannot say whether it exists. */
export const UNKNOWN_POLL_MS = 120_000;

/**
 * A running trajectory's page reloads when it changes. An unknown id polls only while it may still appear: not at
 * all when Temporal has no such workflow, for a bounded time when Temporal cannot be asked, as usual when its
 * workflow runs (started, prompt not stored yet).
 */
function pollScript({ view, temporalStatus }: TrajectoryDetails): string {
  const id = embedded(view.trajectoryId);
  const stamp = embedded(trajectoryStamp(view));
  if (view.status !== 'unknown' || temporalStatus === 'Running') return `RatchetUI.pollTrajectory(${id}, ${stamp});`;
  if (temporalStatus !== 'not connected' && temporalStatus !== 'unreachable') return '';
  return `(() => { const until = Date.now() + ${UNKNOWN_POLL_MS};
  const tick = async () => { const now = await fetch('/api/trajectories/' + encodeURIComponent(${id}) + '/stamp').then((r) => r.json()).catch(() => null);
    if (now && now.stamp !== ${stamp}) return location.reload();
    if (Date.now() < until) setTimeout(tick, 3000);
    else document.getElementById('poll-state').textContent = 'Stopped checking: reload the page to look again.'; };
  setTimeout(tick, 3000); })();`;
}

/** Temporal's own account of the workflow, beside the row's status: its run, its history, what it is waiting on. */
function workflowPanel(workflow: WorkflowDescription, temporalUrl: string | null): Html | string {
  if (workflow.runId === null) return '';
  return html`<details id="temporal-panel" ${workflow.pendingActivities.length > 0 ? 'open' : ''}><summary>Temporal: ${workflow.status}
 · ${workflow.pendingActivities.length} pending activit${workflow.pendingActivities.length === 1 ? 'y' : 'ies'}</summary>
<p>run id <code id="workflow-run-id">${workflow.runId}</code> · started ${workflow.startTime?.toISOString() ?? '–'}
 ${workflow.closeTime ? html` · closed ${workflow.closeTime.toISOString()}` : ''} · ${workflow.historyLength ?? '–'} history events
 ${temporalUrl ? html` · <a href="${temporalUrl}" target="_blank" rel="noreferrer">history in Temporal UI</a>` : ''}</p>
${
  workflow.pendingActivities.length > 0
    ? html`<table id="pending-activities"><tr><th>activity</th><th>state</th><th>attempt</th><th>last failure</th></tr>
${workflow.pendingActivities.map(
  (
    a,
  ) => html`<tr><td>${a.activityType}</td><td>${a.state}</td><td class="num">${a.attempt}${a.maximumAttempts > 0 ? ` of ${a.maximumAttempts}` : ''}</td>
<td>${a.lastFailure ?? ''}</td></tr>`,
)}</table>`
    : ''
}</details>`;
}

/** Gold answers; a code task's (a program, a test's output) keep their lines. */
function goldLine(gold: string[]): Html {
  if (gold.some((answer) => answer.includes('\n'))) return html`<p>Gold answer:</p><pre id="gold">${gold.join('\n────\n')}</pre>`;
  return html`<p>Gold answer: <b id="gold">${gold.join(' | ')}</b></p>`;
}

/**
 * Where turn t's feedback (`Feedback`, a turn from before environments) or observations went: into the next turn's
 * context, or nowhere (the last turn of a finished trajectory).
 */
export function feedbackLabel(view: TrajectoryView, t: number, noun = 'Feedback'): string {
  if (t < view.turns.length - 1 || view.generating) return `${noun} (appended as tokens before turn ${t + 2}):`;
  if (view.status === 'completed' || view.status === 'failed') {
    return `${noun} for this verdict (never appended: the trajectory ended after this turn, so it is in no context and not trained on):`;
  }
  return `${noun} (appended before turn ${t + 2} if the trajectory goes on):`;
}

/** The environment the trajectory runs in: the row's, else the request's; unknown (no row, no Temporal) says so. */
function environmentPart(view: TrajectoryView, known: boolean): Html | string {
  if (view.environment !== null) return html` · environment <b id="environment">${view.environment}</b>`;
  if (!known) return '';
  return html` · environment <b id="environment" title="stored before environments, or its request is not at hand: math, or code for a code task">–</b>`;
}

/** A red flag when Temporal and the row tell different stories now, or did when the controller's sweep compared them. */
function agreementLine({ agreement, recordedDisagreements }: TrajectoryDetails): Html | string {
  if (agreement.verdict === 'disagree')
    return html`<p class="flag" id="status-disagreement">Temporal and Postgres disagree: ${agreement.reason}.</p>`;
  const recorded = recordedDisagreements.at(-1);
  if (!recorded) return '';
  return html`<p class="flag" id="status-disagreement">Temporal and Postgres disagreed when the admission controller compared them
 (${recorded.detectedAt.toISOString()}): Temporal said ${recorded.temporalStatus}, the row said ${recorded.rowStatus ?? 'nothing (there was no row)'}.</p>`;
}

function workflowClass(status: string): string {
  if (status === 'Completed') return 'completed';
  if (status === 'Running') return 'running';
  return ['Failed', 'Canceled', 'Terminated', 'TimedOut'].includes(status) ? 'failed' : 'muted';
}

function endLine(details: TrajectoryDetails): Html | string {
  const { view } = details;
  if (view.status === 'failed') {
    return html`<p class="flag" id="failure">Failed: <b>${view.failureType ?? 'InternalError'}</b> (${view.failureClass ?? 'infrastructure'}) after ${view.turns.length} turns — ${view.error}</p>`;
  }
  if (view.status === 'completed') {
    const returns = view.turns.map((t) => fixed(t.reward)).join(', ');
    return html`<p id="end-reason">Ended: <b>${view.endReason}</b> after ${view.turns.length} turns · returns ${returns}</p>`;
  }
  if (view.status === 'queued') return html`<p>Queued: its group waits for admission under the run's staleness bound.</p>`;
  if (view.status === 'unknown') return unknownLine(details.temporalStatus);
  return '';
}

function unknownLine(temporalStatus: string): Html {
  if (temporalStatus === 'not found') {
    return html`<p class="flag" id="unknown-trajectory">No such trajectory: Postgres has no rows for this id and Temporal has no workflow with it.
 <a href="/search">Search</a> for a run, group or qid instead.</p>`;
  }
  if (temporalStatus === 'Running')
    return html`<p id="unknown-trajectory">Its workflow has started; Postgres has nothing yet (the prompt is not stored yet).</p>`;
  if (CLOSED.has(temporalStatus))
    return html`<p class="flag" id="unknown-trajectory">Its workflow is ${temporalStatus}, yet Postgres has no rows for it.</p>`;
  return html`<p class="flag" id="unknown-trajectory">Unknown trajectory: Postgres has no rows for this id, and Temporal is ${temporalStatus}, so whether
 it was submitted cannot be checked. <span id="poll-state">Checking again every 3 s for ${UNKNOWN_POLL_MS / 60_000} minutes.</span></p>`;
}

const CLOSED = new Set(['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut']);

/** A turn's header, then (unless `agentBody` replaces them) its answer, extracted answer and feedback or observations. */
function turnSection(id: string, turn: TurnView, answer: AnswerParts, view: TrajectoryView, t: number, agentBody?: Html): Html {
  return html`<section class="turn" data-turn="${turn.turn}">
<h3>Turn ${turn.turn + 1} <span class="verdict ${turn.verdict ?? ''}">${turn.verdict ?? 'not verified yet'}</span>
 <span class="muted">· ${turn.outputIds.length} tokens · finish ${turn.finishReason ?? '–'} · context ${turn.contextLen}
 · versions ${turn.versionStart ?? '–'}→${turn.versionEnd ?? '–'} · reward ${fixed(turn.rawReward)} · return ${fixed(turn.reward)}${serverText(turn)}${timingText(turn)}</span>
 <a href="${trajectoryHref(id)}/turns/${turn.turn}/tokens">tokens</a></h3>
${agentBody ?? answerPart(turn, answer)}
${turn.verdictDetail ? detailSection(turn.verdictDetail) : ''}
${agentBody ? '' : observationsSection(turn, feedbackLabel(view, t, turn.observations === null ? 'Feedback' : 'Observations'))}
${turn.outputVersions.length > 0 ? versionStrip(turn.outputVersions) : ''}
</section>`;
}

/** The model's answer (its reasoning folded) and what was extracted from it for the judge. */
function answerPart(turn: TurnView, answer: AnswerParts): Html {
  return html`${answer.reasoning !== null ? html`<details class="reasoning"><summary>reasoning (&lt;think&gt;, ${answer.reasoning.length} characters)</summary><pre>${answer.reasoning}</pre></details>` : ''}
<pre class="answer">
${answer.answer}</pre>
${
  turn.extractedAnswer?.includes('\n')
    ? html`<p>Extracted answer (the code that ran):</p><pre class="extracted">
${turn.extractedAnswer}</pre>`
    : html`<p>Extracted answer: <b class="extracted">${turn.extractedAnswer ?? '(none)'}</b></p>`
}`;
}

/** The server that generated the turn and its prefix-cache hit, where known (turns stored before issue 27 have neither). */
function serverText(turn: TurnView): Html | string {
  if (turn.servedBy === null && turn.cachedTokens === null) return '';
  return html` · server <span class="served-by">${turn.servedBy ?? '–'}</span> · cached <span class="cached-tokens"
 title="prompt tokens the server reported served from its prefix cache, of the turn's context">${turn.cachedTokens ?? '–'}</span>`;
}

/** The turn's queue, generate and verify time, each with its definition (the run page's latency charts use the same). */
function timingText(turn: TurnView): Html | string {
  const timings = turnTimings(turn);
  if (timings.length === 0) return '';
  return html`${timings.map(({ phase, ms, definition }) => html` · ${phase} <span class="turn-${phase}" title="${definition}">${duration(ms)}</span>`)}`;
}

/** Why the judge decided: the failing test, its expected against actual output side by side, or the traceback. */
function detailSection(detail: string): Html {
  const parts = verdictDetailParts(detail);
  return html`<div class="verdict-detail"><p>Judge${parts.test ? html`: <b class="failed-test">${parts.test}</b>` : ''}</p>
${
  parts.expected !== null
    ? html`<table class="expected-actual"><tr><th>expected</th><th>actual</th></tr><tr><td><pre class="expected">${parts.expected}</pre></td>
<td><pre class="actual">${parts.actual}</pre></td></tr></table>`
    : html`<pre class="judge-text">${parts.text}</pre>`
}</div>`;
}

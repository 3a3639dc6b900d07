import { html } from 'hono/html';
import { embedded, fixed, groupHref, groupOf, page, runHref, trajectoryHref, type Html } from '../layout.js';
import { trajectoryStamp, type TrajectoryDetails } from '../trajectory-details.js';
import type { TurnView } from '../../store/trajectory-view.js';
import type { AnswerParts } from '../answer-parts.js';
import { versionStrip } from './version-strip.js';

/** /trajectories/<id>: the problem, then each turn as the model, the verifier and the feedback saw it. */
export function trajectoryPage(details: TrajectoryDetails): Html {
  const { view } = details;
  const id = view.trajectoryId;
  const final = view.status === 'completed' || view.status === 'failed';
  const body = html`
<h1>Trajectory <code>${id}</code></h1>
<p><span class="status ${view.status}" id="trajectory-status">${view.status}</span>
 · Temporal <span class="status ${workflowClass(details.temporalStatus)}" id="workflow-status">${details.temporalStatus}</span>
 · qid <b>${view.qid ?? '–'}</b> · run <a href="${runHref(id.split('/')[0]!)}">${id.split('/')[0]}</a>
 · group <a href="${groupHref(view.groupId ?? groupOf(id))}">${view.groupId ?? groupOf(id)}</a>
 ${view.layout ? html` · layout ${view.layout}` : ''}${view.staleness !== null ? html` · staleness ${view.staleness}` : ''}
 ${details.temporalUrl ? html` · <a id="temporal-link" href="${details.temporalUrl}" target="_blank" rel="noreferrer">open in Temporal UI</a>` : ''}</p>
${agreementLine(details)}
${endLine(details)}
${details.problem ? html`<h2>Problem</h2><pre id="problem">
${details.problem.problem}</pre><p>Gold answer: <b id="gold">${details.problem.gold.join(' | ')}</b></p>` : ''}
<details><summary>Rendered prompt (${view.promptIds.length} tokens)</summary><pre>${details.promptText}</pre></details>
${view.turns.map((turn, t) => turnSection(id, turn, details.answers[t]!))}
${view.generating ? html`<div class="turn" id="generating"><h3>Turn ${view.generating.turn + 1} · generating (attempt ${view.generating.attempt}, ${view.generating.ids.length} tokens so far)</h3>
<pre>${details.generatingText}</pre>${versionStrip(view.generating.versions)}</div>` : ''}
${details.live ? html`<p class="muted" id="live-phase">Workflow: ${details.live.phase}, turn ${details.live.turn + 1}/${details.live.turns}</p>` : ''}`;
  return page(`Trajectory ${id}`, body, final ? '' : `RatchetUI.pollTrajectory(${embedded(id)}, ${embedded(trajectoryStamp(view))});`);
}

/** A red flag when Temporal and the row tell different stories now, or did when the controller's sweep compared them. */
function agreementLine({ agreement, recordedDisagreements }: TrajectoryDetails): Html | string {
  if (agreement.verdict === 'disagree') return html`<p class="flag" id="status-disagreement">Temporal and Postgres disagree: ${agreement.reason}.</p>`;
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
  if (view.status === 'unknown') return html`<p class="muted">Postgres has no rows for this trajectory yet (not started, or unknown id).</p>`;
  return '';
}

function turnSection(id: string, turn: TurnView, answer: AnswerParts): Html {
  return html`<section class="turn" data-turn="${turn.turn}">
<h3>Turn ${turn.turn + 1} <span class="verdict ${turn.verdict ?? ''}">${turn.verdict ?? 'not verified yet'}</span>
 <span class="muted">· ${turn.outputIds.length} tokens · finish ${turn.finishReason ?? '–'} · context ${turn.contextLen}
 · versions ${turn.versionStart ?? '–'}→${turn.versionEnd ?? '–'} · reward ${fixed(turn.rawReward)} · return ${fixed(turn.reward)}</span>
 <a href="${trajectoryHref(id)}/turns/${turn.turn}/tokens">tokens</a></h3>
${answer.reasoning !== null ? html`<details class="reasoning"><summary>reasoning (&lt;think&gt;, ${answer.reasoning.length} characters)</summary><pre>${answer.reasoning}</pre></details>` : ''}
<pre class="answer">
${answer.answer}</pre>
<p>Extracted answer: <b class="extracted">${turn.extractedAnswer ?? '(none)'}</b></p>
${turn.feedbackText !== null ? html`<p class="muted">Feedback (appended as tokens before the next turn):</p><pre class="feedback">
${turn.feedbackText}</pre>` : ''}
${turn.outputVersions.length > 0 ? versionStrip(turn.outputVersions) : ''}
</section>`;
}

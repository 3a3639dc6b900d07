import { html } from 'hono/html';
import type { Html } from '../layout.js';
import { compactJson } from '../compact-json.js';
import type { ObservationView, TurnView } from '../../store/read/trajectory-view.js';

/** An observation longer than this (characters, or lines) is shown folded, its role and size in the summary. */
export const LONG_OBSERVATION_CHARS = 2000;
export const LONG_OBSERVATION_LINES = 30;

/**
 * What the environment answered a turn with: its observation messages by role, its reward before the run's shaping,
 * whether it ended the episode, its info, and (folded) the state the next step starts from. A turn stored before
 * environments has only its feedback text: shown as the user message it was.
 */
export function observationsSection(turn: TurnView, label: string): Html | string {
  if (turn.observations === null) {
    if (turn.feedbackText === null) return '';
    return html`<p class="muted feedback-label">${label}</p>
<div class="observations"><div class="observation" data-role="user"><span class="role">user</span><pre class="feedback">
${turn.feedbackText}</pre></div></div>`;
  }
  return html`<p class="muted feedback-label">${label}${turn.observations.length === 0 ? ' none' : ''}</p>
${turn.observations.length > 0 ? html`<div class="observations">${turn.observations.map(observation)}</div>` : ''}
${
  turn.feedbackText !== null
    ? html`<details class="appended"><summary>as appended: the chat template's text (${turn.feedbackText.length} characters)</summary><pre class="feedback">
${turn.feedbackText}</pre></details>`
    : ''
}
${environmentStepLine(turn)}`;
}

function observation(message: ObservationView): Html {
  const lines = message.content.split('\n').length;
  if (message.content.length > LONG_OBSERVATION_CHARS || lines > LONG_OBSERVATION_LINES) {
    return html`<details class="observation long" data-role="${message.role}"><summary><span class="role">${message.role}</span>
 <span class="muted">${message.content.length} characters, ${lines} lines</span></summary><pre class="observation-content">
${message.content}</pre></details>`;
  }
  return html`<div class="observation" data-role="${message.role}"><span class="role">${message.role}</span><pre class="observation-content">
${message.content}</pre></div>`;
}

/** The step's reward (before shaping: the header's `reward` is after it), `done`, info, and the state folded away. */
function environmentStepLine(turn: TurnView): Html {
  const info = turn.info && Object.keys(turn.info).length > 0 ? turn.info : null;
  const state = turn.state === undefined ? null : compactJson(turn.state);
  return html`<div class="environment-step"><p>environment reward <b class="environment-reward">${environmentReward(turn.environmentReward)}</b>
 <span class="muted">(before the run's shaping)</span> · done <b class="done">${turn.done === null ? '–' : turn.done ? 'yes' : 'no'}</b>${info ? ' · info:' : ''}</p>
${info ? html`<pre class="info">${compactJson(info)}</pre>` : ''}
${
  state !== null
    ? html`<details class="state"><summary>state (${state.length} characters of JSON)</summary><pre class="state-json">
${state}</pre></details>`
    : ''
}</div>`;
}

/** Exact enough to tell 0.125 from 0.13, without trailing zeros: rewards are usually small integers. */
export function environmentReward(value: number | null): string {
  if (value === null || Number.isNaN(value)) return '–';
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(4)));
}

import { html } from 'hono/html';
import type { Html } from '../layout.js';
import { compactJson } from '../compact-json.js';
import type { AnswerParts } from '../answer-parts.js';
import { endWords, forkSentence, type AgentTurn } from '../agent-turns.js';
import type { ObservationView, TrajectoryView, TurnView } from '../../store/read/trajectory-view.js';
import { environmentReward, LONG_OBSERVATION_CHARS, LONG_OBSERVATION_LINES } from './observations.js';

/**
 * A turn of an agent program's trajectory: the call it answered, the reply the program got (its reasoning folded,
 * content, tool calls, malformed calls), the messages the program's next call added, and on the last turn how the
 * program ended. Everything here came from the model or the program: hono's `html` escapes it all.
 */
export function agentTurnBody(turn: TurnView, agent: AgentTurn, answer: AnswerParts, view: TrajectoryView, t: number): Html {
  return html`<p class="agent-call">program call index <b class="call-index">${agent.call ?? '–'}</b>
 <span class="muted">(${agent.call === null ? 'not recorded' : `the program's ${ordinal(agent.call + 1)} model call`})</span>
 · finish reason <b class="call-finish">${agent.finishReason ?? '–'}</b></p>
<div class="agent-reply"><p class="muted">Reply the program got (${agent.role} message):</p>
${
  agent.reasoning !== null
    ? html`<details class="reasoning reply-reasoning"><summary>reasoning (reasoning_content, ${agent.reasoning.length} characters)</summary><pre>
${agent.reasoning}</pre></details>`
    : ''
}
${
  agent.content !== null && agent.content !== ''
    ? html`<p class="muted">content (${agent.content.length} characters):</p><pre class="reply-content">
${agent.content}</pre>`
    : html`<p class="muted reply-content-none">content: none</p>`
}
${
  agent.toolCalls.length > 0
    ? html`<p class="muted">tool calls (${agent.toolCalls.length}):</p><ol class="tool-calls">${agent.toolCalls.map(
        (
          call,
        ) => html`<li class="tool-call">tool <b class="tool-name">${call.name}</b> · tool_call_id <code class="tool-call-id">${call.id ?? '–'}</code>
${call.argumentsInvalid ? html` <span class="flag">arguments are not JSON, shown as sent:</span>` : ' arguments:'}<pre class="tool-arguments">
${call.arguments}</pre></li>`,
      )}</ol>`
    : ''
}
${
  agent.malformed.length > 0
    ? html`<p class="muted">malformed tool calls (${agent.malformed.length}: not run; the program was given each one's observation to send back):</p>
<ol class="malformed-calls">${agent.malformed.map(
        (
          m,
        ) => html`<li class="malformed-call">tool call index <b class="malformed-index">${m.index ?? '–'}</b> · kind <b class="malformed-kind">${m.kind}</b>
 · observation:<pre class="malformed-observation">
${m.observation}</pre></li>`,
      )}</ol>`
    : ''
}</div>
<details class="model-output"><summary>the model's text as generated, reasoning aside (${answer.answer.length} characters, decoded from its tokens)</summary><pre class="answer">
${answer.answer}</pre></details>
${nextMessages(turn, agent, view, t)}
${agent.end ? endSection(turn, agent) : ''}
${stepLine(turn)}`;
}

/** Between turn t and the next: the next turn's context is not turn t's sequence extended, but rendered anew. */
export function forkMarker(agent: AgentTurn | null, turn: TurnView): Html | string {
  if (agent?.fork == null && turn.forkIds === undefined) return '';
  return html`<div class="fork-marker" data-fork-before="${turn.turn + 1}"${agent?.fork ? html` data-fork-kind="${String(agent.fork.kind)}"` : ''}>
<b>Fork</b>: <span class="fork-words">${forkSentence(agent?.fork ?? null, turn.turn + 1)}</span>${
    turn.forkIds !== undefined ? html` <span class="muted">(its context: <span class="fork-context">${turn.forkIds.length}</span> tokens)</span>` : ''
  }.</div>`;
}

/** The messages the program's next call appended after this turn's reply (tool results, user messages). */
function nextMessages(turn: TurnView, agent: AgentTurn, view: TrajectoryView, t: number): Html | string {
  const messages = turn.observations ?? [];
  if (agent.fork) {
    return html`<p class="muted feedback-label">Messages the program's next call added: none recorded, as that call rewrote its history
 (the fork below): turn ${t + 2}'s context holds its whole conversation, rendered anew.</p>`;
  }
  if (agent.end && messages.length === 0) return '';
  const label = nextLabel(view, t);
  return html`<p class="muted feedback-label">${label}${messages.length === 0 ? ' none' : ''}</p>
${messages.length > 0 ? html`<div class="observations">${messages.map((message) => agentMessage(message))}</div>` : ''}`;
}

function nextLabel(view: TrajectoryView, t: number): string {
  if (t < view.turns.length - 1 || view.generating) return `Messages the program's next call added (appended as tokens before turn ${t + 2}):`;
  if (view.status === 'completed' || view.status === 'failed')
    return "Messages the program's next call added (never appended: the trajectory ended after this turn):";
  return `Messages the program's next call added (appended before turn ${t + 2} if the trajectory goes on):`;
}

/** One message with its role and tool_call_id; a long one folded, its size in the summary (as the page does for observations). */
function agentMessage(message: ObservationView): Html {
  const lines = message.content.split('\n').length;
  const id =
    message.toolCallId === undefined ? '' : html` <span class="muted">tool_call_id</span> <code class="tool-call-id">${message.toolCallId}</code>`;
  if (message.content.length > LONG_OBSERVATION_CHARS || lines > LONG_OBSERVATION_LINES) {
    return html`<details class="observation long" data-role="${message.role}"><summary><span class="role">${message.role}</span>${id}
 <span class="muted">${message.content.length} characters, ${lines} lines</span></summary><pre class="observation-content">
${message.content}</pre></details>`;
  }
  return html`<div class="observation" data-role="${message.role}"><span class="role">${message.role}</span>${id}<pre class="observation-content">
${message.content}</pre></div>`;
}

/** The last turn: how the program ended, and what the verifier (or the program) made of it. */
function endSection(turn: TurnView, agent: AgentTurn): Html {
  const end = agent.end!;
  return html`<div class="agent-end" data-end="${end.kind}"><p><b>Program ended</b>: <span class="end-words">${endWords(end, turn.verdict)}</span></p>
${
  end.kind === 'answer'
    ? html`<p class="muted">answer the program returned (${end.answer.length} characters, at most its last 2000 characters kept):</p><pre class="program-answer">
${end.answer}</pre><p>Extracted answer: <b class="extracted">${turn.extractedAnswer ?? '(none)'}</b></p>`
    : ''
}</div>`;
}

/** The step's reward before shaping and done; the info as stored (the reply again, the fork, the end) folded away. */
function stepLine(turn: TurnView): Html {
  const info = turn.info === null ? null : compactJson(turn.info);
  return html`<div class="environment-step"><p>environment reward <b class="environment-reward">${environmentReward(turn.environmentReward)}</b>
 <span class="muted">(before the run's shaping)</span> · done <b class="done">${turn.done === null ? '–' : turn.done ? 'yes' : 'no'}</b></p>
${
  info !== null
    ? html`<details class="agent-info"><summary>info as stored (${info.length} characters of JSON)</summary><pre class="info">
${info}</pre></details>`
    : ''
}</div>`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

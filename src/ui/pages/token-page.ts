import { html, raw } from 'hono/html';
import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import type { TrajectoryView } from '../../store/read/trajectory-view.js';
import { page, trajectoryHref, type Html } from '../layout.js';
import { versionColour } from './version-strip.js';

/**
 * A turn as the trainer sees it: context (prompt mask 1), output (loss mask 1, each token with its logprob and
 * policy version) and the feedback that follows (mask 1 again in the next turn's context). Colour shows either
 * the logprob (white = certain, red = unlikely) or the version, switchable without a reload.
 */
export function tokenPage(view: TrajectoryView, turnIndex: number, tokenizer: ModelTokenizer): Html {
  const turn = view.turns[turnIndex]!;
  const context = contextTokens(view, turnIndex);
  const piece = (id: number) => tokenizer.decodeAll([id]);
  const spans = [
    ...context.map((id) => `<span class="prompt" title="context · mask 1">${escape(piece(id))}</span>`),
    ...turn.outputIds.map((id, i) => {
      const logprob = turn.outputLogprobs[i] ?? 0;
      const version = turn.outputVersions[i] ?? -1;
      return `<span class="output" data-logprob-colour="${logprobColour(logprob)}" data-version-colour="${versionColour(version)}" style="background:${logprobColour(logprob)}"
 title="output · loss mask 1 · logprob ${logprob.toFixed(3)} · v${version}">${escape(piece(id))}</span>`;
    }),
    ...turn.feedbackIds.map((id) => `<span class="feedback-token" title="feedback · mask 1 in the next context">${escape(piece(id))}</span>`),
  ].join('');
  const body = html`<h1>Turn ${turnIndex + 1} tokens of <a href="${trajectoryHref(view.trajectoryId)}">${view.trajectoryId}</a></h1>
<p>${context.length} context tokens (grey, prompt mask 1) · <span id="output-count">${turn.outputIds.length}</span> output tokens (loss mask 1)
 · ${turn.feedbackIds.length} feedback tokens (yellow) · colour by <button onclick="colourBy('logprob')">logprob</button> <button onclick="colourBy('version')">policy version</button></p>
<div class="tokens" id="tokens">${raw(spans)}</div>`;
  const script = `function colourBy(kind){for(const el of document.querySelectorAll('#tokens .output'))el.style.background=el.dataset[kind+'Colour'];}`;
  return page(`Tokens ${view.trajectoryId} turn ${turnIndex + 1}`, body, script);
}

/** C_t: the prompt, then every earlier output and feedback, as the turn was generated from. */
function contextTokens(view: TrajectoryView, turnIndex: number): number[] {
  const ids = [...view.promptIds];
  for (const earlier of view.turns.slice(0, turnIndex)) ids.push(...earlier.outputIds, ...earlier.feedbackIds);
  return ids;
}

function logprobColour(logprob: number): string {
  const p = Math.exp(logprob);
  return `hsl(0 80% ${Math.round(55 + 45 * p)}%)`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

import { html } from 'hono/html';
import type { PolicyHealth } from '../../store/read/policy-health.js';
import { fixed, page, runHref, type Html } from '../layout.js';

/**
 * `/runs/<runId>/policy`: the behaviour policy's health per policy version, from the stored token arrays of the run's
 * newest completed trajectories: the mean logprob of the tokens it sampled, and, only where sampling was the policy's
 * own distribution, −mean logprob as an estimate of its per-token entropy. Each figure says what it is.
 */
export function policyPage(runId: string, health: PolicyHealth): Html {
  const body = html`<h1>Behaviour policy of run <a href="${runHref(runId)}"><code>${runId}</code></a></h1>
<p id="policy-scope">From the <b id="policy-trajectories">${health.trajectories}</b> newest completed trajectories: every token the policy generated
 (prompt and feedback tokens left out), under the policy version that generated it. <b>Mean logprob</b>: the mean of log p(token) the inference
 server reported for the tokens it sampled, under the weights that sampled them. A falling mean logprob means the policy samples less likely
 tokens: it is growing more uncertain (or its sampling was loosened).</p>
<p id="entropy-note">${
    health.plainSampling
      ? "Entropy is not stored (servers report the sampled token's logprob only); every trajectory read was sampled from the policy's own distribution (temperature 1, no top-p, top-k or min-p cut, no repetition penalty), so −mean logprob is a Monte-Carlo estimate of the per-token entropy, shown as such."
      : "Entropy is not stored (servers report the sampled token's logprob only), and these trajectories were not all sampled from the policy's own distribution (temperature ≠ 1, a top-p, top-k or min-p cut, or a repetition penalty): −mean logprob would not estimate the entropy, so none is shown."
  }</p>
${
  health.byVersion.length === 0
    ? html`<p class="muted" id="no-tokens">No completed trajectory with stored tokens yet.</p>`
    : html`
<table id="policy-by-version"><tr><th>policy version</th><th title="Generated tokens with a stored logprob">tokens</th>
<th title="Mean log p of the sampled tokens under the policy that sampled them">mean logprob</th>
<th title="−mean logprob: the per-token entropy, estimated, only for untruncated sampling at temperature 1">entropy estimate (nats / token)</th></tr>
${[...health.byVersion].reverse().map(
  (v) => html`<tr data-version="${v.version}"><td class="num">${v.version}</td><td class="num">${v.tokens}</td>
<td class="num mean-logprob">${fixed(v.meanLogprob, 4)}</td><td class="num entropy">${fixed(v.entropyEstimate, 4)}</td></tr>`,
)}</table>`
}`;
  return page(`Behaviour policy of ${runId}`, body);
}

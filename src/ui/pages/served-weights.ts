import { html } from 'hono/html';
import type { ServedWeightsRow, ServerNow } from '../../store/write/served-weights.js';

type Html = ReturnType<typeof html>;

const VERDICT_HELP =
  "proven: the server scored the publisher's probe sequence within the parity bounds of the reference computed from the " +
  'published weights; unproven: served without a proof (no reference, or the simulated policy); refused: no token was tagged with the ' +
  'version on that server (the load or the probe failed, see the error); loading: asked, not decided yet.';

/**
 * "Which weights is each server serving now?" (issue 33): per inference server its version (the tag its tokens carry)
 * since when, and the ledger's newest loads with their probe figures and verdicts. Shared by every run: versions are
 * global, as the servers are.
 */
export function servedWeightsSection(servers: readonly ServerNow[], ledger: readonly ServedWeightsRow[]): Html {
  if (servers.length === 0 && ledger.length === 0) return html``;
  return html`<details class="served-weights" id="served-weights" ${ledger.some((row) => row.verdict === 'refused') || servers.some((s) => s.version === null) ? 'open' : ''}>
<summary>Served weights: ${servers.map((server) => html`<span class="${server.version === null ? 'flag' : ''}">${server.server} ${server.version === null ? 'serves no vouched version' : html`v${server.version}`}</span> `)}</summary>
<table title="${VERDICT_HELP}"><thead><tr><th>version</th><th>server</th><th>verdict</th><th>asked</th><th>loaded</th><th title="mean and max |served − reference| logprob over the probe's tokens, nats">probe Δ mean / max</th><th>error</th></tr></thead>
<tbody>${ledger.map(
    (row) => html`<tr class="${row.verdict === 'refused' ? 'flag' : ''}"><td>${row.version}</td><td>${row.server}</td><td>${row.verdict}</td>
<td>${row.requestedAt.toISOString()}</td><td>${row.loadedAt?.toISOString() ?? '–'}</td>
<td>${row.meanAbsDelta === null ? '–' : `${row.meanAbsDelta.toFixed(4)} / ${row.maxAbsDelta!.toFixed(4)} (${row.probeTokens} tokens)`}</td>
<td>${row.errorType ? `${row.errorType}: ${row.error ?? ''}` : (row.error ?? '')}</td></tr>`,
  )}</tbody></table>
<p class="muted">${VERDICT_HELP} Also <code>ratchet policy status</code>.</p>
</details>`;
}

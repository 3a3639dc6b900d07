import { html } from 'hono/html';
import type { GroupView } from '../../store/read/group-view.js';
import { groupAdvantages } from '../../trajectory/group-advantages.js';
import { fixed, page, runHref, trajectoryHref, type Html } from '../layout.js';

/** `/groups/<groupId>`: the n samples of one prompt side by side, turn by turn, with GRPO advantages. */
export function groupPage(group: GroupView): Html {
  // An advantage compares a sample with its whole group: until every sample has finished it cannot be right yet.
  const finished = group.members.filter((m) => m.status === 'completed' || m.status === 'failed').length;
  const pending = finished < group.size ? `pending, ${finished} of ${group.size} done` : null;
  const advantages = groupAdvantages(group.members.map((m) => m.rewards));
  const turns = Math.max(0, ...group.members.map((m) => Math.max(m.verdicts.length, m.rewards.length)));
  const body = html`<h1>Group <code>${group.groupId}</code></h1>
<p>qid <b>${group.qid ?? '–'}</b> · run <a href="${runHref(group.runId)}">${group.runId}</a> · <span id="group-size">${group.members.length}</span> of ${group.size} samples
${group.admission ? html` · admission ${group.admission.status}${group.admission.admittedVersion !== null ? html` at policy version ${group.admission.admittedVersion}` : ''}${group.admission.consumedAt ? html` · consumed ${group.admission.consumedAt.toISOString()}` : ''}` : ''}</p>
<table id="group"><tr><th>sample</th><th>status</th>${Array.from({ length: turns }, (_, t) => html`<th>turn ${t + 1}</th>`)}<th>staleness</th></tr>
${group.members.map(
  (
    member,
    i,
  ) => html`<tr class="member" data-sample="${member.sample}"><td><a href="${trajectoryHref(member.trajectoryId)}">#${member.sample}</a></td>
<td class="status ${member.status}">${member.status}${member.failureType ? html`<br>${member.failureType}` : ''}</td>
${Array.from({ length: turns }, (_, t) => cell(member.verdicts[t], member.rawRewards[t], member.rewards[t], pending ?? advantages[i]![t] ?? null, member.outputLens[t]))}
<td class="num">${member.staleness ?? '–'}</td></tr>`,
)}</table>
<p class="muted">Each cell: verdict · reward r · return R · GRPO advantage (R − group mean) / group std at that turn, over the group's
 completed samples once every sample has finished · output tokens.</p>
${pending ? html`<p id="advantages-pending">Advantages pending: ${finished} of ${group.size} samples done; they are shown once the whole group has finished.</p>` : ''}`;
  const live = group.members.some((m) => m.status === 'running' || m.status === 'queued');
  return page(`Group ${group.groupId}`, body, live ? 'RatchetUI.pollLive();' : '');
}

/** A turn's cell; `advantage` is a number, or why there is none yet. */
function cell(
  verdict: string | undefined,
  reward: number | undefined,
  ret: number | undefined,
  advantage: number | string | null,
  length: number | undefined,
): Html {
  if (verdict === undefined) return html`<td class="muted">–</td>`;
  const shown = typeof advantage === 'string' ? advantage : fixed(advantage);
  return html`<td><span class="verdict ${verdict}">${verdict}</span><br>r ${fixed(reward)} · R ${fixed(ret)} · A <b class="advantage">${shown}</b><br><span class="muted">${length ?? '–'} tokens</span></td>`;
}

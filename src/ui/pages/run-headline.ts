import { html } from 'hono/html';
import type { RunHeadlineFacts } from '../../store/read/run-headline.js';
import type { RunCounters } from '../../store/read/run-views.js';
import type { VersionRewards } from '../../store/read/version-rewards.js';
import { fixed, numberText, type Html } from '../layout.js';
import type { RunTraining } from '../training-charts.js';

/** One headline number: its label, its value, its change against the one before, and its definition (the tooltip). */
interface Headline {
  id: string;
  label: string;
  value: string;
  change?: number | null;
  /** Samples it rests on, when it is a mean or a rate. */
  n?: number;
  definition: string;
  /** The counter the page's poll keeps current. */
  counter?: keyof RunCounters;
}

/**
 * The top of the run page: "is it learning?" in a few numbers. Rates and means are of the newest policy version that
 * generated completed trajectories, against the version before (by each trajectory's first generated token, as the
 * reward-by-version charts count them), each with the samples it rests on.
 */
export function runHeadline(facts: RunHeadlineFacts, counters: RunCounters, training: RunTraining): Html {
  const newest = training.byVersion.at(-1);
  const before = training.byVersion.at(-2);
  const step = training.steps.at(-1);
  const versionNote = newest
    ? ` Trajectories whose first generated token came from policy version ${newest.version}${before ? `, change against version ${before.version}` : ''}.`
    : '';
  const of = (pick: (v: VersionRewards) => number | undefined) => ({
    value: newest ? fixed(pick(newest) ?? null, 3) : '–',
    change: newest && before ? delta(pick(newest), pick(before)) : null,
    n: newest?.trajectories,
  });
  const { selfCorrection: sc } = facts;
  const items: Headline[] = [
    {
      id: 'policy-version',
      label: 'newest policy version',
      value: facts.newestPolicyVersion === null ? '–' : String(facts.newestPolicyVersion),
      definition: 'The newest policy version a trainer published (versions are shared by every run); 0 is the initial weights.',
    },
    {
      id: 'last-step',
      label: 'last training step',
      value: step ? `${step.step} → v${step.policyVersion}` : '–',
      definition: 'The newest step the trainer recorded for this run, and the policy version it published.',
    },
    {
      id: 'success',
      label: `success, any turn${newest ? ` (v${newest.version})` : ''}`,
      ...of((v) => v.anySuccess),
      definition: `Share of completed trajectories with a correct turn.${versionNote}`,
    },
    {
      id: 'first-turn-success',
      label: `success at turn 1${newest ? ` (v${newest.version})` : ''}`,
      ...of((v) => v.byTurn[0]?.successRate),
      definition: `Share of completed trajectories whose first turn was correct (beside any turn: how much the later turns add).${versionNote}`,
    },
    {
      id: 'mean-return',
      label: `mean return R₀${newest ? ` (v${newest.version})` : ''}`,
      ...of((v) => v.meanReturn),
      definition: `Mean return-to-go from the first turn, R₀, over completed trajectories.${versionNote}`,
    },
    {
      id: 'self-correction',
      label: 'self-correction',
      value: fixed(sc.rate, 3),
      n: sc.notCorrectFollowed,
      definition:
        `P(correct at turn t+1 | not correct at turn t): of the turns not correct (wrong, no answer, timeout…) that another turn followed, the share ` +
        `followed by a correct one, over the newest ${sc.trajectories} completed trajectories (at most 5,000): ${sc.corrected} of ${sc.notCorrectFollowed}.`,
    },
    {
      id: 'tokens-per-second',
      label: 'tokens/s (last minute)',
      value: numberText(counters.recentTokensPerSecond),
      counter: 'recentTokensPerSecond',
      definition: 'Output tokens of trajectories stored in the last minute, per second (kept current while the page is open).',
    },
  ];
  return html`<div class="headline" id="headline">${items.map(
    (item) => html`<div class="headline-item" id="headline-${item.id}" title="${item.definition}">
<span class="label">${item.label}</span><b ${item.counter ? html`data-counter="${item.counter}"` : ''}>${item.value}</b>
${changeText(item.change)}${item.n !== undefined ? html`<span class="muted n">n=${item.n}</span>` : ''}</div>`,
  )}</div>`;
}

function delta(now: number | undefined, then: number | undefined): number | null {
  return now === undefined || then === undefined ? null : now - then;
}

function changeText(change: number | null | undefined): Html | string {
  if (change === null || change === undefined) return '';
  const sign = change > 0 ? '+' : change < 0 ? '−' : '±';
  return html`<span class="change ${change > 0 ? 'up' : change < 0 ? 'down' : ''}">${sign}${Math.abs(change).toFixed(3)}</span>`;
}

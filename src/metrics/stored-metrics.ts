import { Counter, Gauge, type Registry } from 'prom-client';
import type pg from 'pg';
import { readMetricCounts } from '../store/metric-counts.js';
import { readCounters, readRun } from '../store/rollout-groups.js';
import { admissionCapacity } from '../admission/staleness.js';

/**
 * Ratchet's outcome metrics, read from Postgres at each scrape rather than counted in the activities: they survive
 * restarts, agree with `ratchet runs status` and the exported rows by construction, and need no hook in the
 * workflow code. Every worker serves the same values, so dashboards take max() over instances.
 */
export function registerStoredMetrics(registry: Registry, pool: pg.Pool): () => Promise<void> {
  const registers = [registry];
  const trajectories = new Counter({ name: 'ratchet_trajectories_total', help: 'Stored trajectories by outcome (completed, failed) and failure type and class', labelNames: ['status', 'failure_type', 'failure_class'], registers });
  const turns = new Counter({ name: 'ratchet_turns_total', help: 'Turns of stored trajectories by verdict (correct, wrong, no_answer, timeout, error)', labelNames: ['verdict'], registers });
  const tokens = new Counter({ name: 'ratchet_generated_tokens_total', help: 'Output tokens of stored trajectories', registers });
  const batches = new Counter({ name: 'ratchet_batches_total', help: 'Batches by state: claimed (all), acknowledged, expired (lease ran out unacknowledged: its groups are re-delivered)', labelNames: ['state'], registers });
  const groups = new Gauge({ name: 'ratchet_run_groups', help: 'Groups of a training run by state: pending (queued for admission), running, admitted', labelNames: ['run', 'state'], registers });
  const capacity = new Gauge({ name: 'ratchet_run_max_concurrent_groups', help: 'A run\'s max_concurrent: the most groups admission lets run at once', labelNames: ['run'], registers });
  const admission = new Gauge({ name: 'ratchet_run_admission_capacity', help: 'Groups admission would start now under the run\'s staleness bound and max_concurrent (as `ratchet runs status` capacity)', labelNames: ['run'], registers });
  const version = new Gauge({ name: 'ratchet_policy_version', help: 'The latest published policy version', registers });
  const running = new Gauge({ name: 'ratchet_running_trajectories', help: 'Trajectories started and not yet stored', registers });
  const disagreements = new Counter({
    name: 'ratchet_status_disagreements_total', registers, labelNames: ['kind'],
    help: 'Trajectories whose closed workflow and stored row disagree (kind temporal_<status>_row_<completed|failed|missing>), as the admission controller found them',
  });

  return async () => {
    const counts = await readMetricCounts(pool);
    for (const metric of [trajectories, turns, tokens, batches, groups, capacity, admission, disagreements]) metric.reset();
    for (const row of counts.trajectories) trajectories.inc({ status: row.status, failure_type: row.failureType, failure_class: row.failureClass }, row.n);
    for (const row of counts.turns) turns.inc({ verdict: row.verdict }, row.n);
    for (const row of counts.disagreements) disagreements.inc({ kind: row.kind }, row.n);
    tokens.inc(counts.generatedTokens);
    for (const [state, n] of Object.entries(counts.batches)) batches.inc({ state }, n);
    for (const run of counts.runs) {
      groups.set({ run: run.runId, state: 'pending' }, run.pendingGroups);
      groups.set({ run: run.runId, state: 'running' }, run.runningGroups);
      groups.set({ run: run.runId, state: 'admitted' }, run.admitted);
      capacity.set({ run: run.runId }, run.maxConcurrent);
    }
    // The same computation admission uses, so the gauge cannot drift from what the controller does.
    await Promise.all(counts.runs.map(async ({ runId }) => {
      const [bound, counters] = await Promise.all([readRun(pool, runId), readCounters(pool, runId)]);
      if (bound) admission.set({ run: runId }, admissionCapacity(bound, counters));
    }));
    version.set(counts.policyVersion);
    running.set(counts.runningTrajectories);
  };
}

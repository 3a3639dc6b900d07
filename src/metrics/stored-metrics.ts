import { Counter, Gauge, type Registry } from 'prom-client';
import type pg from 'pg';
import { readMetricCounts } from '../store/read/metric-counts.js';
import { STALE_AT_HAND_OUT, type RunAggregates } from '../store/read/run-aggregates.js';
import { countersOf } from '../store/read/run-views.js';
import { admissionCountersOf } from '../store/read/run-status.js';
import { admissionCapacity } from '../admission/staleness.js';
import type { RunConfig } from '../admission/group-membership.js';
import { STORED_VERDICTS } from '../trajectory/turn-verdicts.js';
import { LATENCY_PHASES, LATENCY_SAMPLE, recentTurnLatencies, TURN_LATENCY } from '../store/read/turn-latency.js';

/**
 * Runs with a `run` label of their own: the most recently active. The rest are summed under OLDER_RUNS, so a
 * deployment's series stay bounded however many runs it keeps, and a sum over `run` is still the whole.
 */
export const LABELLED_RUNS = 50;
export const OLDER_RUNS = '_older';

/**
 * Ratchet's outcome metrics, read from Postgres at each scrape rather than counted in the activities: they survive
 * restarts, agree with `ratchet runs status`, the UI and the exported rows by construction (the same aggregates,
 * src/store/read/run-aggregates.ts, and the same definitions, countersOf), and need no hook in the workflow code. Every
 * worker serves the same values, so dashboards take max() over instances.
 */
export function registerStoredMetrics(registry: Registry, pool: pg.Pool): () => Promise<void> {
  const registers = [registry];
  const trajectories = new Counter({
    name: 'ratchet_trajectories_total',
    help: 'Stored trajectories by run, outcome (completed, failed) and failure type and class',
    labelNames: ['run', 'status', 'failure_type', 'failure_class'],
    registers,
  });
  const turns = new Counter({
    name: 'ratchet_turns_total',
    help: `Turns of stored trajectories by run and verdict (${STORED_VERDICTS.join(', ')}); a turn succeeds when its verdict is correct`,
    labelNames: ['run', 'verdict'],
    registers,
  });
  const tokens = new Counter({
    name: 'ratchet_generated_tokens_total',
    help: 'Output tokens of stored trajectories, by run',
    labelNames: ['run'],
    registers,
  });
  const submitted = new Counter({
    name: 'ratchet_submitted_trajectories_total',
    help: 'Trajectories submitted, by run (as the run page counts them: recorded by the client, at least every trajectory Postgres has seen)',
    labelNames: ['run'],
    registers,
  });
  const queued = new Gauge({
    name: 'ratchet_queued_trajectories',
    help: 'Trajectories submitted and not started, by run: the backlog',
    labelNames: ['run'],
    registers,
  });
  const running = new Gauge({
    name: 'ratchet_running_trajectories',
    help: 'Trajectories started and not yet stored, by run',
    labelNames: ['run'],
    registers,
  });
  const consumed = new Counter({
    name: 'ratchet_consumed_trajectories_total',
    help: 'Completed trajectories in batches a consumer acknowledged, by run (counted at acknowledgement)',
    labelNames: ['run'],
    registers,
  });
  const stale = new Counter({
    name: 'ratchet_stale_trajectories_total',
    help: 'Of ratchet_stale_at_hand_out_trajectories, those in batches a consumer acknowledged, by run (counted at acknowledgement)',
    labelNames: ['run'],
    registers,
  });
  const staleAtHandOut = new Gauge({
    name: 'ratchet_stale_at_hand_out_trajectories',
    help: `Stale, as the run page counts it: ${STALE_AT_HAND_OUT} By run`,
    labelNames: ['run'],
    registers,
  });
  const batches = new Counter({
    name: 'ratchet_batches_total',
    help: 'Batches by state: claimed (all), acknowledged, expired (lease ran out unacknowledged: its groups are re-delivered)',
    labelNames: ['state'],
    registers,
  });
  const groups = new Gauge({
    name: 'ratchet_run_groups',
    help: 'Groups of a training run by state: pending (queued for admission), running, admitted (running or finished, not cancelled), cancelled',
    labelNames: ['run', 'state'],
    registers,
  });
  const capacity = new Gauge({
    name: 'ratchet_run_max_concurrent_groups',
    help: "A run's max_concurrent: the most groups admission lets run at once",
    labelNames: ['run'],
    registers,
  });
  const admission = new Gauge({
    name: 'ratchet_run_admission_capacity',
    help: "Groups admission would start now under the run's staleness bound and max_concurrent (as `ratchet runs status` capacity)",
    labelNames: ['run'],
    registers,
  });
  // Turn affinity and the prefix cache (issue 27): counters whose ratios are the run page's two shares.
  const laterTurns = new Counter({
    name: 'ratchet_turns_after_first_total',
    help: "Turns after the first of stored trajectories whose server and previous turn's server are known, by run",
    labelNames: ['run'],
    registers,
  });
  const onPreviousServer = new Counter({
    name: 'ratchet_turns_on_previous_server_total',
    help: 'Turns after the first generated by the same inference server as the turn before (turn affinity held), by run; over ratchet_turns_after_first_total: the share',
    labelNames: ['run'],
    registers,
  });
  const cacheHits = new Counter({
    name: 'ratchet_prefix_cache_hit_tokens_total',
    help: 'Prompt tokens the inference server reported served from its prefix cache, by run and turns (first, after_first); only servers that report it count',
    labelNames: ['run', 'turns'],
    registers,
  });
  const cacheQueries = new Counter({
    name: 'ratchet_prefix_cache_query_tokens_total',
    help: "Context tokens of the turns whose inference server reported its prefix-cache hits, by run and turns (first, after_first): the hit rate's denominator",
    labelNames: ['run', 'turns'],
    registers,
  });
  const latency = new Gauge({
    name: 'ratchet_turn_latency_seconds',
    help: `Turn latency by run, phase and quantile (0.5, 0.95), as the run page defines it (${LATENCY_PHASES.map((phase) => TURN_LATENCY[phase]).join('; ')}): ${LATENCY_SAMPLE}. Absent where no turn was timed`,
    labelNames: ['run', 'phase', 'quantile'],
    registers,
  });
  const version = new Gauge({ name: 'ratchet_policy_version', help: 'The latest published policy version', registers });
  const disagreements = new Counter({
    name: 'ratchet_status_disagreements_total',
    registers,
    labelNames: ['kind'],
    help: 'Trajectories whose closed workflow and stored row disagree (kind temporal_<status>_row_<completed|failed|missing>), as the admission controller found them',
  });

  return async () => {
    const counts = await readMetricCounts(pool);
    for (const metric of [
      trajectories,
      turns,
      tokens,
      submitted,
      queued,
      running,
      consumed,
      stale,
      staleAtHandOut,
      batches,
      groups,
      capacity,
      admission,
      disagreements,
      laterTurns,
      onPreviousServer,
      cacheHits,
      cacheQueries,
      latency,
    ])
      metric.reset();
    // The labelled runs' latency, in one statement (older runs are not summed: a percentile does not add up).
    const latencies = await recentTurnLatencies(
      pool,
      counts.runs.slice(0, LABELLED_RUNS).map((run) => run.runId),
    );
    for (const [run, byPhase] of latencies)
      for (const phase of LATENCY_PHASES)
        for (const [quantile, ms] of [
          ['0.5', byPhase[phase].p50],
          ['0.95', byPhase[phase].p95],
        ] as const)
          if (ms !== null) latency.set({ run, phase, quantile }, ms / 1000);
    counts.runs.forEach((aggregates, rank) => {
      const run = rank < LABELLED_RUNS ? aggregates.runId : OLDER_RUNS;
      const counters = countersOf(aggregates);
      trajectories.inc({ run, status: 'completed', failure_type: '', failure_class: '' }, counters.completed);
      for (const failure of aggregates.failures)
        trajectories.inc({ run, status: 'failed', failure_type: failure.failureType, failure_class: failure.failureClass }, failure.trajectories);
      for (const [verdict, n] of Object.entries(aggregates.turnsByVerdict)) turns.inc({ run, verdict }, n.turns);
      tokens.inc({ run }, counters.outputTokens);
      submitted.inc({ run }, counters.submitted);
      queued.inc({ run }, counters.queued);
      running.inc({ run }, counters.running);
      consumed.inc({ run }, counters.consumedTrajectories);
      stale.inc({ run }, counters.staleTrajectories);
      staleAtHandOut.inc({ run }, counters.staleAtHandOut);
      const servers = aggregates.turnServers;
      laterTurns.inc({ run }, servers.laterTurns);
      onPreviousServer.inc({ run }, servers.onPreviousServer);
      cacheHits.inc({ run, turns: 'first' }, servers.cachedTokens - servers.laterCachedTokens);
      cacheHits.inc({ run, turns: 'after_first' }, servers.laterCachedTokens);
      cacheQueries.inc({ run, turns: 'first' }, servers.contextTokens - servers.laterContextTokens);
      cacheQueries.inc({ run, turns: 'after_first' }, servers.laterContextTokens);
      const settings = counts.settings.get(aggregates.runId);
      if (run !== OLDER_RUNS && settings) trainingRunGauges(settings, aggregates, counts.policyVersion);
    });
    for (const row of counts.disagreements) disagreements.inc({ kind: row.kind }, row.n);
    for (const [state, n] of Object.entries(counts.batches)) batches.inc({ state }, n);
    version.set(counts.policyVersion);
  };

  function trainingRunGauges(settings: RunConfig, aggregates: RunAggregates, policyVersion: number): void {
    const { runId: run, groups: byState } = aggregates;
    groups.set({ run, state: 'pending' }, byState.waiting.groups);
    groups.set({ run, state: 'running' }, byState.running.groups);
    groups.set({ run, state: 'admitted' }, byState.running.groups + byState.unconsumed.groups + byState.rejected.groups + byState.consumed.groups);
    groups.set({ run, state: 'cancelled' }, byState.cancelled.groups);
    capacity.set({ run }, settings.maxConcurrent);
    // The same computation admission uses, so the gauge cannot drift from what the controller does.
    admission.set({ run }, admissionCapacity(settings, admissionCountersOf(aggregates, policyVersion)));
  }
}

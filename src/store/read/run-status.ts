import type pg from 'pg';
import { readRun } from '../write/rollout-groups.js';
import { latestPolicyVersion } from '../write/policy-versions.js';
import { readOneRunAggregates, readRunAggregates, readRunConfigs, type RunAggregates } from './run-aggregates.js';
import { countersOf, type RunCounters } from './run-views.js';
import { recentTurnLatency, type TurnLatency } from './turn-latency.js';
import type { FailureClass } from '../../trajectory/failure.js';
import type { RunConfig } from '../../admission/group-membership.js';
import { admissionCapacity, type AdmissionCounters, type StalenessBound } from '../../admission/staleness.js';

/** Failed trajectories of a run, counted by failure type and by class (rows stored before failure types: InternalError, infrastructure). */
export interface FailureCounts {
  failed: number;
  byType: Record<string, number>;
  byClass: Record<FailureClass, number>;
}

/**
 * Where a run stands. The top-level counts are groups; `trajectories` and the fields named so count trajectories.
 * Every number is read from the aggregates Postgres keeps (migration 013): the UI and /metrics read the same ones.
 */
export interface RunStatus extends StalenessBound {
  runId: string;
  policyVersion: number;
  /** Waiting for admission (complete or still joining). */
  waiting: number;
  running: number;
  /** Finished with at least one completed trajectory (consumed or not). */
  accepted: number;
  /** Finished with every trajectory failed. */
  rejected: number;
  /** Cancelled while waiting or running (`ratchet runs cancel`). */
  cancelled: number;
  /** Finished, not yet acknowledged by a consumer (claimed or not). */
  unconsumed: number;
  /** Acknowledged by a consumer. */
  consumed: number;
  /** Completed trajectories in acknowledged batches. */
  consumedTrajectories: number;
  /** Of the stale at hand-out, those in batches a consumer acknowledged (counted at acknowledgement). */
  staleTrajectories: number;
  /** STALE_AT_HAND_OUT (src/store/read/run-aggregates.ts): the run page's one "stale", in any batch. */
  staleAtHandOut: number;
  /** Groups admission would start now. */
  capacity: number;
  /** The run's trajectories, as the run page counts them. */
  trajectories: Pick<RunCounters, 'submitted' | 'queued' | 'running' | 'completed' | 'failed'>;
  /** Failed trajectories (not groups), by failure type and by class (infrastructure or data). */
  failures: FailureCounts;
  /**
   * Queue, generate and verify latency now (ms, p50 and p95 over the turns of the newest 50 stored trajectories:
   * TURN_LATENCY, src/store/read/turn-latency.ts, the run page's definition); read by runStatus, not by activeRuns.
   */
  latency?: TurnLatency;
}

export async function runStatus(pool: pg.Pool, runId: string): Promise<RunStatus | undefined> {
  const run = await readRun(pool, runId);
  if (!run) return undefined;
  const [latest, aggregates, latency] = await Promise.all([
    latestPolicyVersion(pool),
    readOneRunAggregates(pool, runId),
    recentTurnLatency(pool, runId),
  ]);
  return { ...statusOf(run, aggregates, latest?.version ?? 0), latency };
}

/** A run and where it stands: its trajectory counters, and its status where it is a training run. */
export interface ActiveRun {
  counters: RunCounters;
  aggregates: RunAggregates;
  status?: RunStatus;
}

/** The most recently active runs (at most `limit`), in three queries however many runs and rows there are. */
export async function activeRuns(pool: pg.Pool, limit = 50): Promise<ActiveRun[]> {
  const [runs, latest] = await Promise.all([readRunAggregates(pool, { limit }), latestPolicyVersion(pool)]);
  const configs = await readRunConfigs(
    pool,
    runs.filter((run) => run.kind === 'training').map((run) => run.runId),
  );
  return runs.map((aggregates) => {
    const config = configs.get(aggregates.runId);
    return { counters: countersOf(aggregates), aggregates, ...(config ? { status: statusOf(config, aggregates, latest?.version ?? 0) } : {}) };
  });
}

/** A training run's status from its settings, its aggregates and the latest policy version. */
export function statusOf(run: RunConfig, aggregates: RunAggregates, version: number): RunStatus {
  const counters = countersOf(aggregates);
  const { groups } = aggregates;
  return {
    ...run,
    policyVersion: version,
    waiting: groups.waiting.groups,
    running: groups.running.groups,
    accepted: groups.unconsumed.groups + groups.consumed.groups,
    rejected: groups.rejected.groups,
    cancelled: groups.cancelled.groups,
    unconsumed: groups.unconsumed.groups,
    consumed: aggregates.consumed.groups,
    consumedTrajectories: aggregates.consumed.trajectories,
    staleTrajectories: aggregates.consumed.staleTrajectories,
    staleAtHandOut: aggregates.staleAtHandOut,
    capacity: admissionCapacity(run, admissionCountersOf(aggregates, version)),
    trajectories: {
      submitted: counters.submitted,
      queued: counters.queued,
      running: counters.running,
      completed: counters.completed,
      failed: counters.failed,
    },
    failures: { failed: aggregates.failedTrajectories, byType: aggregates.failuresByType, byClass: aggregates.failuresByClass },
  };
}

/** The counters of AReaL's staleness formula from the aggregates: as readCounters reads them from the group rows. */
export function admissionCountersOf(aggregates: RunAggregates, version: number): AdmissionCounters {
  return { version, running: aggregates.groups.running.groups, accepted: aggregates.groups.unconsumed.groups + aggregates.groups.consumed.groups };
}

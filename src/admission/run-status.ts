import type pg from 'pg';
import { readCounters, readRun } from '../store/rollout-groups.js';
import { admissionCapacity, type StalenessBound } from './staleness.js';
import { readGroupCounts } from '../store/group-counts.js';
import { countFailures, type FailureCounts } from '../store/failure-counts.js';

/** Where a run stands, in groups unless named otherwise. Every number is read from Postgres. */
export interface RunStatus extends StalenessBound {
  runId: string;
  policyVersion: number;
  /** Waiting for admission (complete or still joining). */
  waiting: number;
  running: number;
  /** Finished with at least one completed trajectory. */
  accepted: number;
  /** Finished with every trajectory failed. */
  rejected: number;
  cancelled: number;
  /** Finished, not yet acknowledged by a consumer (claimed or not). */
  unconsumed: number;
  consumed: number;
  /** Trajectories flagged stale in acknowledged batches. */
  staleConsumed: number;
  /** Groups admission would start now. */
  capacity: number;
  /** Failed trajectories (not groups), by failure type and by class (infrastructure or data). */
  failures: FailureCounts;
}

export async function runStatus(pool: pg.Pool, runId: string): Promise<RunStatus | undefined> {
  const run = await readRun(pool, runId);
  if (!run) return undefined;
  const [counters, failures, groups] = await Promise.all([readCounters(pool, runId), countFailures(pool, runId), readGroupCounts(pool, runId)]);
  return {
    ...run,
    policyVersion: counters.version,
    ...groups,
    running: counters.running,
    accepted: counters.accepted,
    capacity: admissionCapacity(run, counters),
    failures,
  };
}

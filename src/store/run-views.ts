import type pg from 'pg';
import { readOneRunAggregates, readRunAggregates, type RunAggregates } from './run-aggregates.js';

/**
 * Read-only views of runs for the UI. A run is either a training run (rollout_runs, with groups and admission) or
 * the name of a plain `ratchet run`: every trajectory id starts with its run's name and a slash
 * (`run/qid/sample`, `run/qid[/tag]/sample`). Both read the aggregates of migration 013 (run-aggregates.ts):
 * a few rows per run, whatever its size.
 */
export interface RunListEntry {
  runId: string;
  kind: 'training' | 'plain';
  lastFinishedAt: Date | null;
  counters: RunCounters;
}

/** The most recently active runs (at most `limit`), each with its counters: one query, however many runs. */
export async function listRuns(pool: pg.Pool, limit = 100): Promise<RunListEntry[]> {
  const runs = await readRunAggregates(pool, { limit });
  return runs.map((run) => ({ runId: run.runId, kind: run.kind, lastFinishedAt: run.lastFinishedAt, counters: countersOf(run) }));
}

/** Trajectory counters of one run (in trajectories, unless the name says groups), read from Postgres at one moment. */
export interface RunCounters {
  /** Trajectories submitted: as the submitting client recorded them, at least every trajectory Postgres has heard of. */
  submitted: number;
  /** Submitted and not started: the backlog (waiting for admission, or for a worker to pick the workflow up). */
  queued: number;
  /** Started and not yet stored (working rows exist). */
  running: number;
  completed: number;
  failed: number;
  failedByType: Record<string, number>;
  /** Groups a consumer has acknowledged (training runs), and the completed trajectories in them. */
  consumedGroups: number;
  consumedTrajectories: number;
  /** Trajectories over the run's max_head_offpolicyness in acknowledged batches (counted at acknowledgement, as `ratchet runs status`). */
  staleTrajectories: number;
  outputTokens: number;
  /** Output tokens of stored trajectories over the seconds from the first birth to the last finish: the run's average. */
  tokensPerSecond: number | null;
  /** Trajectories and output tokens stored per second over the last minute: the run's current throughput. */
  recentTrajectoriesPerSecond: number;
  recentTokensPerSecond: number;
}

export async function runCounters(pool: pg.Pool, runId: string): Promise<RunCounters> {
  return countersOf(await readOneRunAggregates(pool, runId));
}

/**
 * The one definition of a run's trajectory counters, shared by the UI, `ratchet runs status` and /metrics. Submitted is
 * what clients recorded, but never less than what Postgres has seen (groups declare all their members; a run submitted
 * by a client that did not record has only its rows): queued is what is left once running and stored are taken out.
 */
export function countersOf(run: RunAggregates): RunCounters {
  const { runningTrajectories: running, completedTrajectories: completed, failedTrajectories: failed } = run;
  const groupMembers = Object.values(run.groups).reduce((sum, state) => sum + state.trajectories, 0);
  const submitted = Math.max(run.recordedSubmissions, groupMembers, running + completed + failed);
  const seconds = run.firstBirth === null || run.lastFinishedAt === null ? 0 : (run.lastFinishedAt.getTime() - run.firstBirth) / 1000;
  return {
    submitted, queued: submitted - running - completed - failed, running, completed, failed, failedByType: run.failuresByType,
    consumedGroups: run.consumed.groups, consumedTrajectories: run.consumed.trajectories, staleTrajectories: run.consumed.staleTrajectories,
    outputTokens: run.outputTokens, tokensPerSecond: seconds > 0 ? run.outputTokens / seconds : null,
    recentTrajectoriesPerSecond: run.recent.trajectories / run.recent.seconds, recentTokensPerSecond: run.recent.outputTokens / run.recent.seconds,
  };
}

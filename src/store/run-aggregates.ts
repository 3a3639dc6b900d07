import type pg from 'pg';
import type { FailureClass } from '../trajectory/failure.js';
import type { RunConfig } from '../admission/group-membership.js';
import { storableText } from './storable-text.js';

/** A group's state as migration 013's ratchet_group_state names it. */
export type GroupState = 'waiting' | 'running' | 'unconsumed' | 'rejected' | 'consumed' | 'cancelled';
export const GROUP_STATES: readonly GroupState[] = ['waiting', 'running', 'unconsumed', 'rejected', 'consumed', 'cancelled'];

/**
 * A run's counters as the triggers of migration 013 keep them: a few rows per run whatever its size, so every page,
 * `ratchet runs status` and /metrics read the same numbers in O(1). Units are in the names.
 */
export interface RunAggregates {
  runId: string;
  /** A training run (rollout_runs: groups, admission) or a plain `ratchet run`. */
  kind: 'training' | 'plain';
  /** Trajectories a client recorded as submitted (run_submissions); 0 for runs submitted by clients that did not record. */
  recordedSubmissions: number;
  /** Trajectories started and not stored (working prompt rows). */
  runningTrajectories: number;
  completedTrajectories: number;
  failedTrajectories: number;
  outputTokens: number;
  /** ms since epoch of the first stored trajectory's birth, and when the last one was stored. */
  firstBirth: number | null;
  lastFinishedAt: Date | null;
  failuresByType: Record<string, number>;
  failuresByClass: Record<FailureClass, number>;
  /** Failed trajectories by type and class together, as /metrics labels them. */
  failures: { failureType: string; failureClass: FailureClass; trajectories: number }[];
  /** Turns of stored trajectories by verdict, and how many of them succeeded. */
  turnsByVerdict: Record<string, { turns: number; successes: number }>;
  /** Groups, and their members (trajectories), by state: training runs only. */
  groups: Record<GroupState, { groups: number; trajectories: number }>;
  /** What consumers acknowledged, counted at acknowledgement. */
  consumed: { batches: number; groups: number; trajectories: number; staleTrajectories: number };
  /** Trajectories and output tokens stored in the last `seconds`. */
  recent: { seconds: number; trajectories: number; outputTokens: number };
}

/** The window of the recent throughput: the 10-second buckets of the last minute, the current one included. */
const RECENT_BUCKETS = 6;

/** One round trip: the aggregates of up to `limit` runs (all, or those named), the most recently active first. */
export async function readRunAggregates(pool: pg.Pool, options: { runIds?: readonly string[]; limit?: number } = {}): Promise<RunAggregates[]> {
  const { rows } = await pool.query(
    `WITH runs AS (
       SELECT run_id, max(last_finished_at) AS last, min(created_at) AS created FROM (
         SELECT run_id, last_finished_at, NULL::timestamptz AS created_at FROM run_trajectory_counts
         UNION ALL SELECT run_id, NULL, created_at FROM rollout_runs
       ) r WHERE $1::text[] IS NULL OR run_id = ANY($1) GROUP BY run_id
       ORDER BY coalesce(max(last_finished_at), min(created_at)) DESC NULLS LAST, run_id LIMIT $2
     ), window_start AS (SELECT date_bin('10 seconds', now(), 'epoch') - interval '10 seconds' * ($3 - 1) AS at)
     SELECT runs.run_id, runs.last, EXISTS (SELECT 1 FROM rollout_runs r WHERE r.run_id = runs.run_id) AS training, extract(epoch FROM now() - window_start.at)::float8 AS recent_seconds,
       (SELECT row_to_json(c) FROM (SELECT sum(submitted) AS submitted, sum(running) AS running, sum(completed) AS completed, sum(failed) AS failed,
                                           sum(output_tokens) AS tokens, min(first_birth) AS first_birth
                                    FROM run_trajectory_counts WHERE run_id = runs.run_id) c) AS counts,
       (SELECT coalesce(json_agg(json_build_array(failure_type, failure_class, trajectories) ORDER BY failure_type, failure_class), '[]') FROM run_failure_counts WHERE run_id = runs.run_id) AS failures,
       (SELECT coalesce(json_agg(json_build_array(state, groups, members)), '[]') FROM run_group_counts WHERE run_id = runs.run_id) AS groups,
       (SELECT coalesce(json_agg(json_build_array(verdict, turns, successes) ORDER BY verdict), '[]') FROM (
          SELECT verdict, sum(turns) AS turns, sum(successes) AS successes FROM run_turn_counts WHERE run_id = runs.run_id GROUP BY verdict) v) AS turns,
       (SELECT row_to_json(c) FROM run_consumption c WHERE run_id = runs.run_id) AS consumption,
       (SELECT json_build_array(coalesce(sum(trajectories), 0), coalesce(sum(output_tokens), 0)) FROM run_throughput
        WHERE run_id = runs.run_id AND bucket >= window_start.at) AS recent
     FROM runs, window_start ORDER BY coalesce(runs.last, runs.created) DESC NULLS LAST, runs.run_id`,
    [options.runIds ?? null, options.limit ?? 100, RECENT_BUCKETS],
  );
  return rows.map((row): RunAggregates => {
    const counts = row.counts ?? {};
    const groups = Object.fromEntries(GROUP_STATES.map((state) => [state, { groups: 0, trajectories: 0 }])) as RunAggregates['groups'];
    for (const [state, n, members] of row.groups as [GroupState, number, number][]) groups[state] = { groups: Number(n), trajectories: Number(members) };
    const failuresByType: Record<string, number> = {};
    const failuresByClass: Record<FailureClass, number> = { infrastructure: 0, data: 0 };
    for (const [type, failureClass, n] of row.failures as [string, FailureClass, number][]) {
      if (Number(n) === 0) continue;
      failuresByType[type] = (failuresByType[type] ?? 0) + Number(n);
      failuresByClass[failureClass] = (failuresByClass[failureClass] ?? 0) + Number(n);
    }
    const consumption = row.consumption ?? {};
    return {
      runId: row.run_id,
      kind: row.training ? 'training' : 'plain',
      recordedSubmissions: Number(counts.submitted ?? 0),
      runningTrajectories: Number(counts.running ?? 0),
      completedTrajectories: Number(counts.completed ?? 0),
      failedTrajectories: Number(counts.failed ?? 0),
      outputTokens: Number(counts.tokens ?? 0),
      firstBirth: counts.first_birth === null || counts.first_birth === undefined ? null : Number(counts.first_birth),
      lastFinishedAt: row.last,
      failuresByType: Object.fromEntries(Object.entries(failuresByType).sort(([a], [b]) => a.localeCompare(b))),
      failuresByClass,
      failures: (row.failures as [string, FailureClass, number][]).filter(([, , n]) => Number(n) > 0)
        .map(([failureType, failureClass, n]) => ({ failureType, failureClass, trajectories: Number(n) })),
      turnsByVerdict: Object.fromEntries((row.turns as [string, number, number][]).map(([verdict, turns, successes]) => [verdict, { turns: Number(turns), successes: Number(successes) }])),
      groups,
      consumed: {
        batches: Number(consumption.batches ?? 0), groups: Number(consumption.groups ?? 0),
        trajectories: Number(consumption.trajectories ?? 0), staleTrajectories: Number(consumption.stale_trajectories ?? 0),
      },
      recent: { seconds: row.recent_seconds, trajectories: Number(row.recent[0]), outputTokens: Number(row.recent[1]) },
    };
  });
}

/** One run's aggregates: all zero for a run nothing was written for. */
export async function readOneRunAggregates(pool: pg.Pool, runId: string): Promise<RunAggregates> {
  const [found] = await readRunAggregates(pool, { runIds: [runId], limit: 1 });
  return found ?? {
    runId, kind: 'plain', recordedSubmissions: 0, runningTrajectories: 0, completedTrajectories: 0, failedTrajectories: 0, outputTokens: 0, firstBirth: null,
    lastFinishedAt: null, failuresByType: {}, failuresByClass: { infrastructure: 0, data: 0 }, failures: [], turnsByVerdict: {},
    groups: Object.fromEntries(GROUP_STATES.map((state) => [state, { groups: 0, trajectories: 0 }])) as RunAggregates['groups'],
    consumed: { batches: 0, groups: 0, trajectories: 0, staleTrajectories: 0 }, recent: { seconds: 60, trajectories: 0, outputTokens: 0 },
  };
}

/**
 * Records what a client is about to submit, before it starts the workflows: a plain run's backlog is then known to
 * Postgres (submitted and queued count it) before any worker picks it up. Idempotent: resubmitting changes nothing.
 */
export async function recordSubmissions(pool: pg.Pool, trajectoryIds: readonly string[]): Promise<void> {
  for (let at = 0; at < trajectoryIds.length; at += 10_000) {
    await pool.query(
      'INSERT INTO run_submissions (trajectory_id) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT DO NOTHING',
      [trajectoryIds.slice(at, at + 10_000).map(storableText)],
    );
  }
}

/** The settings of these training runs (plain runs have none), in one query. */
export async function readRunConfigs(pool: pg.Pool, runIds: readonly string[]): Promise<Map<string, RunConfig>> {
  const { rows } = await pool.query('SELECT run_id, max_head_offpolicyness, batch_size, max_concurrent FROM rollout_runs WHERE run_id = ANY($1)', [runIds]);
  return new Map(rows.map((row) => [row.run_id, { runId: row.run_id, maxHeadOffpolicyness: row.max_head_offpolicyness, batchSize: row.batch_size, maxConcurrent: row.max_concurrent }]));
}

import type pg from 'pg';

/**
 * Read-only views of runs for the UI. A run is either a training run (rollout_runs, with groups and admission) or
 * the name of a plain `ratchet run`: every trajectory id starts with its run's name and a slash
 * (`run/qid/sample`, `run/qid[/tag]/sample`), so one prefix finds both kinds' trajectories.
 */
export interface RunListEntry {
  runId: string;
  kind: 'training' | 'plain';
  stored: number;
  lastFinishedAt: Date | null;
}

export async function listRuns(pool: pg.Pool): Promise<RunListEntry[]> {
  const { rows } = await pool.query(
    `WITH stored AS (
       SELECT split_part(trajectory_id, '/', 1) AS run_id, count(*)::int AS n, max(finished_at) AS last FROM trajectories GROUP BY 1
     )
     SELECT coalesce(r.run_id, s.run_id) AS run_id, r.run_id IS NOT NULL AS training, coalesce(s.n, 0) AS n, s.last
     FROM rollout_runs r FULL JOIN stored s ON s.run_id = r.run_id
     ORDER BY coalesce(s.last, r.created_at) DESC NULLS LAST, 1`,
  );
  return rows.map((row) => ({ runId: row.run_id, kind: row.training ? 'training' : 'plain', stored: row.n, lastFinishedAt: row.last }));
}

/** Trajectory counters of one run, read from Postgres at one moment. */
export interface RunCounters {
  /** Completed + failed + running + queued: every trajectory Postgres has heard of. */
  submitted: number;
  /** Members of groups still waiting for admission (training runs only). */
  queued: number;
  /** Started and not yet stored (working rows exist). */
  running: number;
  completed: number;
  failed: number;
  failedByType: Record<string, number>;
  /** In groups a consumer has acknowledged. */
  consumed: number;
  /** Flagged stale at hand-out (over the run's max_head_offpolicyness). */
  stale: number;
  outputTokens: number;
  /** Output tokens of stored trajectories over the seconds from the first birth to the last finish. */
  tokensPerSecond: number | null;
}

export async function runCounters(pool: pg.Pool, runId: string): Promise<RunCounters> {
  const prefix = `${runId}/`;
  const [stored, failures, working, groups] = await Promise.all([
    pool.query(
      `SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'failed')::int AS failed,
              coalesce(sum(output_tokens), 0)::bigint AS tokens, min(birth_time) AS first_birth, extract(epoch FROM max(finished_at)) * 1000 AS last_finish
       FROM trajectories WHERE starts_with(trajectory_id, $1)`, [prefix]),
    pool.query(
      `SELECT coalesce(failure_type, 'InternalError') AS type, count(*)::int AS n FROM trajectories
       WHERE starts_with(trajectory_id, $1) AND status = 'failed' GROUP BY 1 ORDER BY 1`, [prefix]),
    pool.query(
      `SELECT count(*)::int AS n FROM trajectory_prompts p
       WHERE starts_with(p.trajectory_id, $1) AND NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.trajectory_id = p.trajectory_id)`, [prefix]),
    pool.query(
      `SELECT coalesce(sum(size) FILTER (WHERE status = 'pending'), 0)::int AS queued,
              (SELECT count(*) FROM rollout_members m JOIN rollout_groups c USING (group_id) WHERE c.run_id = $1 AND c.consumed_at IS NOT NULL)::int AS consumed,
              (SELECT count(*) FROM rollout_members m JOIN rollout_groups c USING (group_id) WHERE c.run_id = $1 AND m.stale)::int AS stale
       FROM rollout_groups WHERE run_id = $1`, [runId]),
  ]);
  const s = stored.rows[0];
  const g = groups.rows[0];
  const seconds = s.first_birth === null ? 0 : (Number(s.last_finish) - Number(s.first_birth)) / 1000;
  const counters = {
    queued: g.queued, running: working.rows[0].n, completed: s.completed, failed: s.failed,
    failedByType: Object.fromEntries(failures.rows.map((row) => [row.type, row.n])),
    consumed: g.consumed, stale: g.stale, outputTokens: Number(s.tokens),
    tokensPerSecond: seconds > 0 ? Number(s.tokens) / seconds : null,
  };
  return { submitted: counters.queued + counters.running + counters.completed + counters.failed, ...counters };
}

/** Curves of one run: success by turn, over time and by policy version, and the output length distribution. */
export interface RunCurves {
  byTurn: { turn: number; trajectories: number; successRate: number }[];
  /** One point per time bucket of finished trajectories (ms since epoch at the bucket's start). */
  overTime: { time: number; trajectories: number; firstTurnSuccess: number; anySuccess: number }[];
  byVersion: { version: number; turns: number; successRate: number }[];
  /** Output lengths (tokens) of every turn, bucketed: [from, to) and a count. */
  outputLengths: { from: number; to: number; turns: number }[];
}

const TIME_BUCKETS = 30;
const LENGTH_BUCKETS = 20;

export async function runCurves(pool: pg.Pool, runId: string): Promise<RunCurves> {
  const prefix = `${runId}/`;
  const [byTurn, overTime, byVersion, lengths] = await Promise.all([
    pool.query(
      `SELECT turn, count(*)::int AS n, avg(success::int)::float8 AS rate FROM monitor_records
       WHERE starts_with(trajectory_id, $1) GROUP BY turn ORDER BY turn`, [prefix]),
    pool.query(
      `WITH done AS (
         SELECT extract(epoch FROM finished_at) * 1000 AS t, coalesce(successes[1], false) AS first_turn, coalesce(true = ANY(successes), false) AS any_turn
         FROM trajectories WHERE starts_with(trajectory_id, $1) AND status = 'completed'
       ), span AS (SELECT min(t) AS lo, greatest(max(t) - min(t), 1) AS width FROM done)
       SELECT lo + width * least(floor((t - lo) / width * $2), $2 - 1) / $2 AS bucket, count(*)::int AS n,
              avg(first_turn::int)::float8 AS first_rate, avg(any_turn::int)::float8 AS any_rate
       FROM done, span GROUP BY 1 ORDER BY 1`, [prefix, TIME_BUCKETS]),
    pool.query(
      `SELECT version_end AS version, count(*)::int AS n, avg(success::int)::float8 AS rate FROM monitor_records
       WHERE starts_with(trajectory_id, $1) GROUP BY 1 ORDER BY 1`, [prefix]),
    pool.query(
      `WITH span AS (SELECT greatest(max(answer_len), 1) AS top FROM monitor_records WHERE starts_with(trajectory_id, $1))
       SELECT least(floor(answer_len::float8 / top * $2), $2 - 1)::int AS bucket, top, count(*)::int AS n
       FROM monitor_records, span WHERE starts_with(trajectory_id, $1) GROUP BY 1, 2 ORDER BY 1`, [prefix, LENGTH_BUCKETS]),
  ]);
  return {
    byTurn: byTurn.rows.map((row) => ({ turn: row.turn, trajectories: row.n, successRate: row.rate })),
    overTime: overTime.rows.map((row) => ({ time: Number(row.bucket), trajectories: row.n, firstTurnSuccess: row.first_rate, anySuccess: row.any_rate })),
    byVersion: byVersion.rows.map((row) => ({ version: row.version, turns: row.n, successRate: row.rate })),
    outputLengths: lengths.rows.map((row) => {
      const width = row.top / LENGTH_BUCKETS;
      return { from: Math.floor(row.bucket * width), to: Math.ceil((row.bucket + 1) * width), turns: row.n };
    }),
  };
}

import type pg from 'pg';

/**
 * A run's completed trajectories grouped by the policy version that generated them: the version of the
 * trajectory's first generated token (`version_start[1]`). Later tokens may come from newer versions when weights
 * were updated mid-trajectory; the span fields show how far they reach.
 */
export interface VersionRewards {
  version: number;
  trajectories: number;
  /** Mean per-turn reward r_t over every turn of these trajectories (reward units: ±1 by default). */
  meanReward: number;
  /** Mean R₀, the return of the whole trajectory (the discounted sum of its turns' rewards). */
  meanReturn: number;
  /** Share of trajectories with a correct answer at any turn. */
  anySuccess: number;
  /** Versions spanned within a trajectory: its last token's version minus its first's, mean and max. */
  meanSpan: number;
  maxSpan: number;
  /** Share of trajectories whose tokens come from more than one version. */
  straddling: number;
  /** Turn t (0-based) among the trajectories that reached it: success rate and mean per-turn reward r_t. */
  byTurn: { turn: number; trajectories: number; successRate: number; meanReward: number }[];
}

export async function rewardsByVersion(pool: pg.Pool, runId: string): Promise<VersionRewards[]> {
  const prefix = `${runId}/`;
  // Trajectories that ended before generating anything (context exhausted at turn 1) have no version: left out.
  const completed = `starts_with(t.trajectory_id, $1) AND t.status = 'completed' AND cardinality(t.version_start) > 0`;
  const [versions, turns] = await Promise.all([
    pool.query(
      `WITH done AS (
         SELECT t.version_start[1] AS version, t.rewards[1] AS return, coalesce(true = ANY(t.successes), false) AS any_success,
                (SELECT sum(r) FROM unnest(t.raw_rewards) r) AS reward_sum, cardinality(t.raw_rewards) AS turns,
                (SELECT max(v) FROM unnest(t.version_end) v) - t.version_start[1] AS span
         FROM trajectories t WHERE ${completed}
       )
       SELECT version, count(*)::int AS n, (sum(reward_sum) / nullif(sum(turns), 0))::float8 AS mean_reward, avg(return)::float8 AS mean_return, avg(any_success::int)::float8 AS any_success,
              avg(span)::float8 AS mean_span, max(span)::int AS max_span, avg((span > 0)::int)::float8 AS straddling
       FROM done GROUP BY version ORDER BY version`, [prefix]),
    pool.query(
      `SELECT t.version_start[1] AS version, u.turn::int - 1 AS turn, count(*)::int AS n,
              avg(u.success::int)::float8 AS rate, avg(u.reward)::float8 AS mean_reward
       FROM trajectories t CROSS JOIN LATERAL unnest(t.successes, t.raw_rewards) WITH ORDINALITY AS u(success, reward, turn) WHERE ${completed}
       GROUP BY 1, 2 ORDER BY 1, 2`, [prefix]),
  ]);
  return versions.rows.map((row) => ({
    version: row.version, trajectories: row.n, meanReward: row.mean_reward, meanReturn: row.mean_return, anySuccess: row.any_success,
    meanSpan: row.mean_span, maxSpan: row.max_span, straddling: row.straddling,
    byTurn: turns.rows.filter((t) => t.version === row.version).map((t) => ({ turn: t.turn, trajectories: t.n, successRate: t.rate, meanReward: t.mean_reward })),
  }));
}

import type pg from 'pg';

/**
 * A run's completed trajectories grouped by the policy version that generated them: the version of the
 * trajectory's first generated token (`version_start[1]`). Later tokens may come from newer versions when weights
 * were updated mid-trajectory; the span fields show how far they reach. Read from migration 012's aggregates
 * (run_versions, run_version_turns), so the cost is a row per version and turn whatever the run's size.
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
  /** Mean output tokens per trajectory, the share of turns cut by the length limit, and trajectories that ran out of context. */
  meanOutputTokens: number;
  truncatedShare: number;
  contextExhausted: number;
  /** Turn t (0-based) among the trajectories that reached it: success rate, mean per-turn reward r_t, turns cut by length. */
  byTurn: { turn: number; trajectories: number; successRate: number; meanReward: number; truncatedShare: number }[];
}

export async function rewardsByVersion(pool: pg.Pool, runId: string): Promise<VersionRewards[]> {
  const [versions, turns] = await Promise.all([
    pool.query(
      `SELECT version, sum(trajectories)::float8 AS n, sum(any_success)::float8 AS any_ok, sum(return_sum)::float8 AS returns, sum(reward_sum)::float8 AS rewards,
              sum(turns)::float8 AS turns, sum(truncated_turns)::float8 AS truncated, sum(context_exhausted)::float8 AS exhausted,
              sum(output_tokens)::float8 AS tokens, sum(span_sum)::float8 AS spans, max(span_max) AS span_max, sum(straddling)::float8 AS straddling
       FROM run_versions WHERE run_id = $1 GROUP BY version ORDER BY version`,
      [runId],
    ),
    pool.query(
      `SELECT version, turn, sum(turns)::float8 AS n, sum(successes)::float8 AS ok, sum(reward_sum)::float8 AS rewards, sum(truncated)::float8 AS truncated
       FROM run_version_turns WHERE run_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [runId],
    ),
  ]);
  return versions.rows.map((row) => ({
    version: row.version,
    trajectories: row.n,
    meanReward: row.rewards / (row.turns || 1),
    meanReturn: row.returns / row.n,
    anySuccess: row.any_ok / row.n,
    meanSpan: row.spans / row.n,
    maxSpan: row.span_max,
    straddling: row.straddling / row.n,
    meanOutputTokens: row.tokens / row.n,
    truncatedShare: row.truncated / (row.turns || 1),
    contextExhausted: row.exhausted,
    byTurn: turns.rows
      .filter((t) => t.version === row.version)
      .map((t) => ({ turn: t.turn, trajectories: t.n, successRate: t.ok / t.n, meanReward: t.rewards / t.n, truncatedShare: t.truncated / t.n })),
  }));
}

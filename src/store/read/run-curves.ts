import type pg from 'pg';
import { latencyOf, type TurnLatency } from './turn-latency.js';

/**
 * A run's curves, read from the aggregates migration 012 keeps (src/store/schema/run-curves-sql.ts): each query reads rows
 * per turn, version, minute or bin of one run, never its trajectories, so the page's poll costs the same at a
 * thousand trajectories as at a million. Every point carries the number of samples it rests on.
 */
export interface RunCurves {
  /** Turns by index (0-based), pooled over versions. */
  byTurn: { turn: number; samples: number; successRate: number; meanOutputTokens: number }[];
  /** Turns by the policy version of their last token and by index: one line per turn across versions. */
  byTurnVersion: { version: number; turn: number; samples: number; successRate: number; meanOutputTokens: number }[];
  /** Completed trajectories per time bucket (ms since epoch at the bucket's start), at most TIME_BUCKETS of them. */
  overTime: {
    time: number;
    samples: number;
    firstTurnSuccess: number | null;
    anySuccess: number | null;
    meanReturn: number | null;
    meanReward: number | null;
    /** Share of turns cut by the length limit (no EOS). */
    truncatedShare: number | null;
    meanOutputTokens: number | null;
    /** Groups finished in the bucket, and the share of them with no training signal (every member the same R₀). */
    groups: number;
    noSignalShare: number | null;
    /** Queue, generation and verification latency of the bucket's turns (TURN_LATENCY, src/store/read/turn-latency.ts): null where no turn was timed. */
    latency: TurnLatency;
  }[];
  /** Seconds each overTime bucket spans (the newest may be partly in the future); null when there is none. */
  bucketSeconds: number | null;
  /** Output lengths (tokens) of every turn: [from, to) and a count. */
  outputLengths: { from: number; to: number; turns: number }[];
  /** Group-relative advantages R₀ − mean R₀ of the group (not divided by the std): [from, to) and a count. */
  advantages: { from: number; to: number; samples: number }[];
  /** Handed-out members by staleness (policy version at hand-out − the trajectory's oldest token version). */
  staleness: { staleness: number; members: number }[];
  /** Finished groups by their oldest first-token version, and the share with no training signal. */
  groupsByVersion: { version: number; groups: number; noSignalShare: number }[];
}

const TIME_BUCKETS = 60;
const LENGTH_BARS = 20;
/** Width of the stored length bins (tokens) and advantage bins (reward units), as migration 012 writes them. */
const LENGTH_BIN = 16;
const ADVANTAGE_BIN = 0.05;
/** Bars of the advantage histogram at most: odd, so one bar is centred on zero. */
const ADVANTAGE_BARS = 21;

/** Past this span the time curves are summed from hourly rows: at most 12 × 60 minutes or ~720 hours (a month) × 8 shards. */
const MINUTES_UP_TO_S = 12 * 3600;

export async function runCurves(pool: pg.Pool, runId: string): Promise<RunCurves> {
  const unit = await timeUnit(pool, runId);
  const [turns, overTime, lengths, advantages, staleness, groups] = await Promise.all([
    pool.query(
      `SELECT version, turn, sum(turns)::float8 AS n, sum(successes)::float8 AS ok, sum(output_tokens)::float8 AS tokens
       FROM run_turn_versions WHERE run_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [runId],
    ),
    pool.query(
      `WITH t AS (
         SELECT ${unit} AS minute, sum(trajectories) AS n, sum(first_turn_success) AS first_ok, sum(any_success) AS any_ok, sum(return_sum) AS returns,
                sum(reward_sum) AS rewards, sum(turns) AS turns, sum(truncated_turns) AS truncated, sum(output_tokens) AS tokens
         FROM run_${unit}s WHERE run_id = $1 GROUP BY 1
       ), g AS (SELECT ${unit} AS minute, groups, no_signal FROM run_group_${unit}s WHERE run_id = $1),
       m AS (
         SELECT coalesce(t.minute, g.minute) AS minute, n, first_ok, any_ok, returns, rewards, turns, truncated, tokens, groups, no_signal
         FROM t FULL JOIN g ON g.minute = t.minute
       ),
       span AS (SELECT min(minute) AS lo, greatest($3, ceil(extract(epoch FROM max(minute) - min(minute)) / $3 / ($2 - 1)) * $3) AS width FROM m),
       b AS (SELECT lo + make_interval(secs => width * floor(extract(epoch FROM m.minute - lo) / width)) AS bucket, span.width, m.* FROM m, span)
       SELECT extract(epoch FROM bucket) * 1000 AS time, coalesce(sum(n), 0)::float8 AS n, (sum(first_ok) / nullif(sum(n), 0))::float8 AS first_rate,
              (sum(any_ok) / nullif(sum(n), 0))::float8 AS any_rate, (sum(returns) / nullif(sum(n), 0))::float8 AS mean_return,
              (sum(rewards) / nullif(sum(turns), 0))::float8 AS mean_reward, (sum(truncated) / nullif(sum(turns), 0))::float8 AS truncated,
              (sum(tokens) / nullif(sum(n), 0))::float8 AS tokens, coalesce(sum(groups), 0)::float8 AS groups,
              (sum(no_signal)::float8 / nullif(sum(groups), 0))::float8 AS no_signal, max(width)::float8 AS width
       FROM b GROUP BY bucket ORDER BY bucket`,
      [runId, TIME_BUCKETS, unit === 'minute' ? 60 : 3600],
    ),
    pool.query(
      `WITH bins AS (SELECT bin, sum(turns) AS n FROM run_length_bins WHERE run_id = $1 GROUP BY bin),
       span AS (SELECT greatest(ceil((max(bin) + 1)::float8 / $2), 1)::int AS width FROM bins)
       SELECT bin / width AS bar, width, sum(n)::float8 AS n FROM bins, span GROUP BY 1, 2 ORDER BY 1`,
      [runId, LENGTH_BARS],
    ),
    pool.query<{ bin: number; n: number }>(
      'SELECT bin, samples::float8 AS n FROM run_advantage_bins WHERE run_id = $1 AND samples > 0 ORDER BY bin',
      [runId],
    ),
    pool.query('SELECT staleness, members::float8 AS n FROM run_staleness WHERE run_id = $1 AND members > 0 ORDER BY 1', [runId]),
    pool.query('SELECT version, groups::float8 AS n, no_signal::float8 / groups AS share FROM run_group_versions WHERE run_id = $1 ORDER BY 1', [
      runId,
    ]),
  ]);
  const bucketSeconds: number | null = overTime.rows[0]?.width ?? null;
  const latency =
    bucketSeconds === null
      ? []
      : await bucketLatency(
          pool,
          runId,
          overTime.rows.map((row) => Number(row.time)),
          bucketSeconds,
        );
  const byTurnVersion = turns.rows.map((row) => ({
    version: row.version,
    turn: row.turn,
    samples: row.n,
    successRate: row.ok / row.n,
    meanOutputTokens: row.tokens / row.n,
  }));
  return {
    byTurn: pooledTurns(turns.rows),
    byTurnVersion,
    overTime: overTime.rows.map((row, i) => ({
      time: Number(row.time),
      samples: row.n,
      firstTurnSuccess: row.first_rate,
      anySuccess: row.any_rate,
      meanReturn: row.mean_return,
      meanReward: row.mean_reward,
      truncatedShare: row.truncated,
      meanOutputTokens: row.tokens,
      groups: row.groups,
      noSignalShare: row.no_signal,
      latency: latency[i]!,
    })),
    bucketSeconds,
    outputLengths: lengths.rows.map((row) => ({ from: row.bar * row.width * LENGTH_BIN, to: (row.bar + 1) * row.width * LENGTH_BIN, turns: row.n })),
    advantages: centredAdvantageBars(advantages.rows),
    staleness: staleness.rows.map((row) => ({ staleness: row.staleness, members: row.n })),
    groupsByVersion: groups.rows.map((row) => ({ version: row.version, groups: row.n, noSignalShare: row.share })),
  };
}

/**
 * Latency per bucket that closed more than CLOSED_AFTER_MS ago, per pool and run: such a bucket gains no turns (a
 * trajectory's finished_at is when it was stored), so the page's poll reads only the buckets still filling, not 60
 * of them (~14 ms of Postgres at a million trajectories, which a loaded machine multiplies). At most CACHED_BUCKETS
 * entries per pool, the oldest dropped first.
 */
const closedLatency = new WeakMap<pg.Pool, Map<string, TurnLatency>>();
const CLOSED_AFTER_MS = 5 * 60_000;
const CACHED_BUCKETS = 20_000;

/** Each bucket's turn latency, by the one definition (migration 018's ratchet_turn_latency), over its own span. */
async function bucketLatency(pool: pg.Pool, runId: string, starts: readonly number[], seconds: number): Promise<TurnLatency[]> {
  let closed = closedLatency.get(pool);
  if (!closed) closedLatency.set(pool, (closed = new Map()));
  const key = (start: number) => `${runId}\u0000${seconds}\u0000${start}`;
  const missing = starts.filter((start) => !closed.has(key(start)));
  const read = new Map<number, TurnLatency>();
  if (missing.length > 0) {
    const { rows } = await pool.query(
      `SELECT b.start, l.* FROM unnest($2::float8[]) b(start)
       CROSS JOIN LATERAL ratchet_turn_latency($1, to_timestamp(b.start / 1000), to_timestamp(b.start / 1000) + make_interval(secs => $3)) l`,
      [runId, missing, seconds],
    );
    const closedBefore = Date.now() - CLOSED_AFTER_MS;
    for (const row of rows) {
      const start = Number(row.start);
      const latency = latencyOf(row);
      read.set(start, latency);
      if (start + seconds * 1000 >= closedBefore) continue;
      closed.set(key(start), latency);
      if (closed.size > CACHED_BUCKETS) closed.delete(closed.keys().next().value!);
    }
  }
  return starts.map((start) => closed.get(key(start)) ?? read.get(start)!);
}

/** Minutes for a run stored over up to 12 hours, else hours: two probes of run_minutes' primary key. */
async function timeUnit(pool: pg.Pool, runId: string): Promise<'minute' | 'hour'> {
  const {
    rows: [span],
  } = await pool.query<{ s: number | null }>('SELECT extract(epoch FROM max(minute) - min(minute))::float8 AS s FROM run_minutes WHERE run_id = $1', [
    runId,
  ]);
  return (span?.s ?? 0) > MINUTES_UP_TO_S ? 'hour' : 'minute';
}

/** Turn sums over versions, from the raw counts (no rounding through rates). */
function pooledTurns(rows: { turn: number; n: number; ok: number; tokens: number }[]): RunCurves['byTurn'] {
  const byTurn = new Map<number, { n: number; ok: number; tokens: number }>();
  for (const row of rows) {
    const sum = byTurn.get(row.turn) ?? { n: 0, ok: 0, tokens: 0 };
    byTurn.set(row.turn, { n: sum.n + row.n, ok: sum.ok + row.ok, tokens: sum.tokens + row.tokens });
  }
  return [...byTurn.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, sum]) => ({ turn, samples: sum.n, successRate: sum.ok / sum.n, meanOutputTokens: sum.tokens / sum.n }));
}

/**
 * The advantage histogram's bars, from the stored bins (bin b holds advantages in [(b − ½)·0.05, (b + ½)·0.05)): every
 * bar the same odd number of bins wide, the middle one centred on zero, and as many bars each side of it, to the
 * largest |advantage| either side. So the zero bar sits in the middle, no edge bar is cut short, and the bars do not
 * move with the smallest value as data arrives. Empty bars are kept (zero counts): the range is symmetric.
 */
export function centredAdvantageBars(bins: readonly { bin: number; n: number }[]): RunCurves['advantages'] {
  if (bins.length === 0) return [];
  const reach = Math.max(...bins.map(({ bin }) => Math.abs(bin)));
  let width = Math.max(1, Math.ceil((2 * reach + 1) / ADVANTAGE_BARS));
  if (width % 2 === 0) width += 1;
  const half = (width - 1) / 2;
  const side = Math.ceil((reach - half) / width);
  const counts = new Map<number, number>();
  for (const { bin, n } of bins) {
    const bar = Math.floor((bin + half) / width);
    counts.set(bar, (counts.get(bar) ?? 0) + n);
  }
  return Array.from({ length: 2 * side + 1 }, (_, k) => {
    const bar = k - side;
    return {
      from: round((bar * width - half - 0.5) * ADVANTAGE_BIN),
      to: round((bar * width + half + 0.5) * ADVANTAGE_BIN),
      samples: counts.get(bar) ?? 0,
    };
  });
}

/** Bin edges are multiples of 0.05: rounded so 0.15000000000000002 prints as 0.15. */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

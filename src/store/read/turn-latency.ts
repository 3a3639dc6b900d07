import type pg from 'pg';

/**
 * Queue, generation and verification latency of a run's turns: p50 and p95 in milliseconds, each with the number of
 * turns it rests on; null where none of them was timed (turns stored before migration 018), never zero.
 */
export interface TurnLatency {
  queue: LatencyPercentiles;
  generate: LatencyPercentiles;
  verify: LatencyPercentiles;
}

export interface LatencyPercentiles {
  turns: number;
  p50: number | null;
  p95: number | null;
}

export const LATENCY_PHASES = ['queue', 'generate', 'verify'] as const;
export type LatencyPhase = (typeof LATENCY_PHASES)[number];

/** Trajectories each latency figure rests on at most (ratchet_turn_latency's default): the newest stored in its window. */
export const LATENCY_TRAJECTORIES = 50;

/**
 * The one definition of each latency, as the run page, `ratchet runs status`, /metrics and the Python client name it
 * (the SQL is ratchet_turn_latency, src/store/schema/turn-timings-sql.ts).
 */
export const TURN_LATENCY: Record<LatencyPhase, string> = {
  queue: 'queue: from Temporal scheduling the generate attempt that produced the turn to a GPU worker starting it',
  generate: "generate: that attempt's generation, from its request to the inference server to the last token",
  verify: "verify: the environment step's run (verifier, sandbox or environment step) up to its verdict and feedback",
};
export const LATENCY_SAMPLE =
  `p50 and p95 over the turns of the newest ${LATENCY_TRAJECTORIES} completed trajectories stored in the window ` +
  '(turns stored before their timings were kept count nowhere: a gap, not zero)';

/** A row of ratchet_turn_latency's columns. */
export function latencyOf(row: Record<string, unknown>): TurnLatency {
  const phase = (name: LatencyPhase): LatencyPercentiles => {
    const turns = Number(row[`${name}_turns`] ?? 0);
    // To a tenth of a millisecond: percentile_cont's interpolation leaves float noise (3849.9999999999995).
    const at = (q: 'p50' | 'p95') => (turns > 0 && row[`${name}_${q}`] != null ? Math.round(Number(row[`${name}_${q}`]) * 10) / 10 : null);
    return { turns, p50: at('p50'), p95: at('p95') };
  };
  return { queue: phase('queue'), generate: phase('generate'), verify: phase('verify') };
}

/** The run's current latency: over the turns of its newest LATENCY_TRAJECTORIES stored trajectories. */
export async function recentTurnLatency(pool: pg.Pool, runId: string): Promise<TurnLatency> {
  const { rows } = await pool.query('SELECT * FROM ratchet_turn_latency($1)', [runId]);
  return latencyOf(rows[0] ?? {});
}

/** The same for several runs in one statement (/metrics). */
export async function recentTurnLatencies(pool: pg.Pool, runIds: readonly string[]): Promise<Map<string, TurnLatency>> {
  if (runIds.length === 0) return new Map();
  const { rows } = await pool.query('SELECT r.run_id, l.* FROM unnest($1::text[]) r(run_id) CROSS JOIN LATERAL ratchet_turn_latency(r.run_id) l', [
    [...runIds],
  ]);
  return new Map(rows.map((row) => [row.run_id as string, latencyOf(row)]));
}

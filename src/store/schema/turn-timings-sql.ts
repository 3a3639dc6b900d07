/**
 * Migration 018: each turn's timings (issue 35), so the run page can show queue, generation and verification latency
 * over time from Postgres. Written by the activities that already write the turn's working row, in the statement that
 * writes it (no statement and no trigger of their own): the generate activity's insert sets queue_ms and generate_ms,
 * the environment step's update sets verify_ms; persist carries them into monitor_records with the rest of the turn.
 *
 * - queue_ms: from Temporal scheduling the generate attempt that produced the output (the activity's
 *   currentAttemptScheduledTimestampMs, the server's clock) to that attempt starting on a GPU worker (the worker's clock;
 *   a negative difference from clock skew is stored as 0). The wait for a free GPU worker slot.
 * - generate_ms: that attempt's generation, from its request to the server to the last token (a resumed turn: the
 *   attempt's own part).
 * - verify_ms: the environment step's run, from the activity starting to its verdict and feedback being ready
 *   (verifier, code sandbox or the environment's step; for a step taken on the environment's own worker, only the
 *   check and tokenization done here).
 *
 * NULL: a turn written before this migration, or by a worker of an earlier build: shown as a gap, never as zero.
 *
 * ratchet_turn_latency is the one definition of the latency percentiles, read by the run page (per time bucket),
 * `ratchet runs status`, /metrics and the Python client: p50 and p95 (percentile_cont, milliseconds) over the turns of
 * the newest `p_trajectories` trajectories stored with finished_at in [p_from, p_to) (a bounded sample, read along
 * trajectories_run_finished: the same cost at a thousand trajectories as at a million), each with the number of turns
 * that had the timing. Failed trajectories keep no monitor record: the turns are those of completed trajectories.
 * Shipped: never edit, add a migration.
 */
export const TURN_TIMINGS_SQL = `
  ALTER TABLE turn_outputs ADD COLUMN queue_ms int, ADD COLUMN generate_ms int, ADD COLUMN verify_ms int;
  ALTER TABLE monitor_records ADD COLUMN queue_ms int, ADD COLUMN generate_ms int, ADD COLUMN verify_ms int;

  CREATE FUNCTION ratchet_turn_latency(p_run text, p_from timestamptz DEFAULT '-infinity', p_to timestamptz DEFAULT 'infinity',
                                       p_trajectories int DEFAULT 50)
  RETURNS TABLE (queue_turns bigint, queue_p50 float8, queue_p95 float8, generate_turns bigint, generate_p50 float8, generate_p95 float8,
                 verify_turns bigint, verify_p50 float8, verify_p95 float8)
  LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT count(m.queue_ms), percentile_cont(0.5) WITHIN GROUP (ORDER BY m.queue_ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY m.queue_ms),
           count(m.generate_ms), percentile_cont(0.5) WITHIN GROUP (ORDER BY m.generate_ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY m.generate_ms),
           count(m.verify_ms), percentile_cont(0.5) WITHIN GROUP (ORDER BY m.verify_ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY m.verify_ms)
    FROM (SELECT t.trajectory_id FROM trajectories t WHERE t.run_id = p_run AND t.finished_at >= p_from AND t.finished_at < p_to
          ORDER BY t.finished_at DESC LIMIT p_trajectories) t
    JOIN monitor_records m ON m.trajectory_id = t.trajectory_id
  $$;
`;

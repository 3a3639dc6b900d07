import type pg from 'pg';

/** A trajectory with working rows: what it is doing now, read from its checkpoints and turn outputs. */
export interface LiveTrajectory {
  trajectoryId: string;
  phase: 'generating' | 'verifying' | 'between turns';
  /** The turn in progress (0-based). */
  turn: number;
  /** Tokens generated so far in the turn being generated. */
  tokens: number;
  /**
   * The highest stored attempt of its current turn: the generate activity's fencing key (Temporal's attempt, plus an
   * offset once the turn falls back to the shared queue); the UI turns it into the attempt a person counts.
   */
  storedAttempt: number;
  /** Seconds since its working rows last changed. */
  idleSeconds: number;
}

/** Every running trajectory (at most `limit`), the longest idle first: those are the ones to look at. */
export async function liveTrajectories(pool: pg.Pool, limit = 200): Promise<LiveTrajectory[]> {
  const { rows } = await pool.query(
    `SELECT p.trajectory_id, c.turn AS checkpoint_turn, c.attempt AS checkpoint_attempt, c.token_count, o.turn AS output_turn, o.attempt AS output_attempt,
            o.verdict, extract(epoch FROM now() - greatest(p.created_at, c.updated_at, o.updated_at))::float8 AS idle
     FROM trajectory_prompts p
     LEFT JOIN LATERAL (SELECT * FROM turn_checkpoints c WHERE c.trajectory_id = p.trajectory_id ORDER BY turn DESC LIMIT 1) c ON true
     LEFT JOIN LATERAL (SELECT * FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id ORDER BY turn DESC LIMIT 1) o ON true
     WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.trajectory_id = p.trajectory_id)
     ORDER BY idle DESC LIMIT $1`,
    [limit],
  );
  return rows.map((row): LiveTrajectory => {
    const generating = row.checkpoint_turn !== null && (row.output_turn === null || row.checkpoint_turn > row.output_turn);
    const phase = generating ? 'generating' : row.output_turn !== null && row.verdict === null ? 'verifying' : 'between turns';
    return {
      trajectoryId: row.trajectory_id,
      phase,
      turn: generating ? row.checkpoint_turn : row.output_turn === null ? 0 : row.verdict === null ? row.output_turn : row.output_turn + 1,
      tokens: generating ? row.token_count : 0,
      storedAttempt: (generating ? row.checkpoint_attempt : row.output_attempt) ?? 1,
      idleSeconds: row.idle,
    };
  });
}

import type pg from 'pg';

/** Schema changes, applied in order, each once. Never edit one that has shipped: add the next. */
const MIGRATIONS: readonly { id: string; sql: string }[] = [
  {
    id: '001_trajectories',
    sql: `
      -- Working storage written by activities while a trajectory runs: the bulk token data stays here,
      -- out of workflow history. Rows are removed when the trajectory is persisted.
      CREATE TABLE trajectory_prompts (
        trajectory_id text PRIMARY KEY,
        prompt_ids bytea NOT NULL,
        prompt_text text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE turn_outputs (
        trajectory_id text NOT NULL,
        turn int NOT NULL,
        attempt int NOT NULL,
        context_len int NOT NULL,
        output_ids bytea NOT NULL,
        output_logprobs bytea NOT NULL,
        finish_reason text NOT NULL,
        version_start int NOT NULL,
        version_end int NOT NULL,
        answer_text text,
        extracted_answer text,
        verdict text,
        feedback_ids bytea,
        feedback_text text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (trajectory_id, turn)
      );
      -- One row per trajectory, written once (completed or failed). Arrays of token data are int32/float32
      -- little-endian bytea; masks are one byte per entry.
      CREATE TABLE trajectories (
        trajectory_id text PRIMARY KEY,
        qid text NOT NULL,
        task_id bigint,
        status text NOT NULL CHECK (status IN ('completed', 'failed')),
        error text,
        layout text NOT NULL,
        num_turns int NOT NULL,
        birth_time bigint NOT NULL,
        packed_input_ids bytea,
        packed_logprobs bytea,
        prompt_mask bytea,
        packed_prompts bytea,
        seq_no_eos_mask boolean[],
        seqlens int[],
        prompt_lens int[],
        version_start int[],
        version_end int[],
        rewards double precision[],
        raw_rewards double precision[],
        successes boolean[],
        output_tokens int NOT NULL DEFAULT 0,
        finished_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX trajectories_birth_time ON trajectories (birth_time);
      CREATE TABLE monitor_records (
        trajectory_id text NOT NULL REFERENCES trajectories ON DELETE CASCADE,
        turn int NOT NULL,
        qid text NOT NULL,
        version_start int NOT NULL,
        version_end int NOT NULL,
        success boolean NOT NULL,
        verdict text NOT NULL,
        prompt_len int NOT NULL,
        answer_len int NOT NULL,
        PRIMARY KEY (trajectory_id, turn)
      );
      CREATE TABLE turn_texts (
        trajectory_id text NOT NULL REFERENCES trajectories ON DELETE CASCADE,
        turn int NOT NULL,
        answer_text text NOT NULL,
        extracted_answer text,
        verdict text NOT NULL,
        feedback_text text,
        PRIMARY KEY (trajectory_id, turn)
      );
    `,
  },
  {
    id: '002_policy_versions',
    sql: `
      -- Published policy versions: the trainer's counter. GPU workers load each new one into their server.
      CREATE TABLE policy_versions (
        version int PRIMARY KEY CHECK (version >= 0),
        weights_path text,
        published_at timestamptz NOT NULL DEFAULT now()
      );
      -- The version every generated token was produced under (int32 per output token).
      ALTER TABLE turn_outputs ADD COLUMN output_versions bytea;
      ALTER TABLE trajectories ADD COLUMN token_versions bytea;
      -- Why the turn loop ended: all turns ran, early stop on success, or the context window ran out.
      ALTER TABLE trajectories ADD COLUMN end_reason text;
    `,
  },
];

/** Applies pending migrations. An advisory lock serialises workers that start at the same moment. */
export async function migrate(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(727274)');
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const applied = new Set((await client.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((row) => row.id));
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.id));
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (id) VALUES ($1)', [migration.id]);
    }
    await client.query('COMMIT');
    return pending.map((migration) => migration.id);
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

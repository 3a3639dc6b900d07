import type pg from 'pg';
import { AGENT_CALLS_SQL } from './agent-calls-sql.js';
import { FINISHED_ORDER_SQL } from './finished-order-sql.js';
import { BATCH_PROTOCOL_SQL } from './batch-protocol-sql.js';
import { RUN_AGGREGATES_SQL } from './run-aggregates-sql.js';
import { RUN_CURVES_BACKFILL_SQL, RUN_CURVES_SQL } from './run-curves-sql.js';
import { SERVED_WEIGHTS_SQL } from './served-weights-sql.js';
import { TRAJECTORY_FILTERS_SQL } from './trajectory-filters-sql.js';
import { TRAJECTORY_SEARCH_SQL } from './trajectory-search-sql.js';
import { TURN_SERVERS_SQL } from './turn-servers-sql.js';
import { TURN_TIMINGS_SQL } from './turn-timings-sql.js';

/**
 * Schema changes, applied in order, each once. Never edit one that has shipped: add the next (test/frozen checks
 * each one's SQL against its recorded checksum).
 */
export const MIGRATIONS: readonly { id: string; sql: string }[] = [
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
  {
    id: '003_rollout_runs',
    sql: `
      -- A training run: the staleness bound its admission keeps (AReaL's max_head_offpolicyness η, counted
      -- in groups of the consumer's batch size) and the most groups it lets run at once.
      CREATE TABLE rollout_runs (
        run_id text PRIMARY KEY,
        max_head_offpolicyness int NOT NULL CHECK (max_head_offpolicyness >= 0),
        batch_size int NOT NULL CHECK (batch_size > 0),
        max_concurrent int NOT NULL CHECK (max_concurrent > 0),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- A group: the n samples of one prompt. It is the unit of admission, counting and consumption.
      -- Counters are updated in the same transaction as the rows they count, so no restart can skew them.
      CREATE TABLE rollout_groups (
        group_id text PRIMARY KEY,
        run_id text NOT NULL REFERENCES rollout_runs,
        seq bigserial NOT NULL,
        qid text NOT NULL,
        size int NOT NULL CHECK (size > 0),
        joined int NOT NULL DEFAULT 0,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'admitted', 'cancelled')),
        admitted_at timestamptz,
        -- What admission saw, kept so the bound can be audited afterwards.
        admitted_version int,
        admitted_accepted int,
        admitted_running int,
        finished int NOT NULL DEFAULT 0,
        completed int NOT NULL DEFAULT 0,
        birth_time bigint,
        finished_at timestamptz,
        -- The batch holding the group, and until when: after that another consumer may claim it.
        batch_id uuid,
        lease_expires_at timestamptz,
        consumed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX rollout_groups_admission ON rollout_groups (run_id, seq) WHERE status = 'pending';
      CREATE INDEX rollout_groups_ready ON rollout_groups (run_id, birth_time, seq) WHERE finished_at IS NOT NULL AND consumed_at IS NULL;
      CREATE TABLE rollout_members (
        trajectory_id text PRIMARY KEY,
        group_id text NOT NULL REFERENCES rollout_groups,
        sample int NOT NULL,
        finished boolean NOT NULL DEFAULT false,
        -- Set at hand-out: the batch's policy version minus the trajectory's oldest token version.
        staleness int,
        stale boolean
      );
      CREATE INDEX rollout_members_group ON rollout_members (group_id);
      -- A batch handed to one consumer. Its groups come back if it is not acknowledged before the lease ends.
      CREATE TABLE rollout_batches (
        batch_id uuid PRIMARY KEY,
        run_id text NOT NULL REFERENCES rollout_runs,
        consumer text NOT NULL,
        policy_version int NOT NULL,
        groups int NOT NULL,
        trajectories int NOT NULL,
        stale_trajectories int NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        lease_expires_at timestamptz NOT NULL,
        acked_at timestamptz
      );
      CREATE INDEX rollout_batches_run ON rollout_batches (run_id, claimed_at);
      -- Publishing a policy version, callable from any language (the Python trainer example uses it):
      -- versions only go forward, and listeners hear of it at once.
      CREATE FUNCTION ratchet_publish_policy_version(new_version int, weights text DEFAULT NULL) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE latest int;
      BEGIN
        LOCK TABLE policy_versions IN EXCLUSIVE MODE;
        SELECT max(version) INTO latest FROM policy_versions;
        IF latest IS NOT NULL AND new_version <= latest THEN
          RAISE EXCEPTION 'policy version % is not newer than the published version %', new_version, latest
            USING ERRCODE = 'RV001';
        END IF;
        INSERT INTO policy_versions (version, weights_path) VALUES (new_version, weights);
        PERFORM pg_notify('ratchet_policy_version', new_version::text);
      END $$;
    `,
  },
  {
    id: '004_failure_types',
    sql: `
      -- Why a failed trajectory failed, in words a trainer can branch on (src/trajectory/failure.ts), and
      -- whether the data or the infrastructure around it was at fault. NULL on completed rows, and on failed
      -- rows stored before this migration.
      ALTER TABLE trajectories ADD COLUMN failure_type text;
      ALTER TABLE trajectories ADD COLUMN failure_class text CHECK (failure_class IN ('infrastructure', 'data'));
      -- No index: counts by run reach failed rows through their groups (rollout_members) and the primary key.
    `,
  },
  {
    id: '005_turn_checkpoints',
    sql: `
      -- Working storage of a turn still generating: the tokens so far, so a retried attempt resumes from here
      -- and the heartbeat carries only a cursor. The attempt owns the row; a newer attempt claims it. Removed
      -- when the turn output is saved or the trajectory is stored.
      CREATE TABLE turn_checkpoints (
        trajectory_id text NOT NULL,
        turn int NOT NULL,
        attempt int NOT NULL,
        token_count int NOT NULL CHECK (token_count >= 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (trajectory_id, turn)
      );
      -- One row per append (int32/float32/int32 little-endian, one entry a token), covering tokens
      -- [first_token, first_token + length): a long turn writes each token once instead of rewriting a growing value.
      CREATE TABLE turn_checkpoint_pieces (
        trajectory_id text NOT NULL,
        turn int NOT NULL,
        first_token int NOT NULL,
        ids bytea NOT NULL,
        logprobs bytea NOT NULL,
        versions bytea NOT NULL,
        PRIMARY KEY (trajectory_id, turn, first_token),
        FOREIGN KEY (trajectory_id, turn) REFERENCES turn_checkpoints ON DELETE CASCADE
      );
    `,
  },
  {
    id: '006_batch_protocol',
    sql: BATCH_PROTOCOL_SQL,
  },
  {
    id: '007_status_disagreements',
    sql: `
      -- A trajectory whose closed workflow and stored row tell different stories (Temporal says Failed, the row
      -- says completed, say), as the admission controller's sweep found it: one row per workflow run, however many
      -- sweeps or controllers see it. ratchet_status_disagreements_total and the UI read it. row_status is NULL
      -- where the trajectory had no row.
      CREATE TABLE status_disagreements (
        trajectory_id text NOT NULL,
        workflow_run_id text NOT NULL,
        kind text NOT NULL,
        temporal_status text NOT NULL,
        row_status text CHECK (row_status IN ('completed', 'failed')),
        detected_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (trajectory_id, workflow_run_id)
      );
    `,
  },
  {
    id: '008_sampling_parameters',
    sql: `
      -- The sampling every output token of a completed trajectory was drawn with (src/trajectory/sampling.ts), sent
      -- in full on every request: its packed_logprobs are of that distribution. NULL where unknown: trajectories
      -- stored by earlier releases, which sent only the temperature and left the rest to the server's defaults.
      ALTER TABLE trajectories
        ADD COLUMN temperature double precision,
        ADD COLUMN top_p double precision,
        ADD COLUMN top_k int,
        ADD COLUMN min_p double precision,
        ADD COLUMN repetition_penalty double precision;
    `,
  },
  {
    id: '009_training_steps',
    sql: `
      -- What a trainer reports after each optimiser step (docs/training-steps.md): the policy version it published
      -- after the step, and its metrics by name (loss, mean_reward, parity_*, version_lag_*, eta, ... and any other),
      -- each a number. One row per (run, step): a trainer that died mid-step and redoes it replaces the row.
      CREATE TABLE training_steps (
        run_id text NOT NULL REFERENCES rollout_runs,
        step int NOT NULL CHECK (step >= 0),
        policy_version int NOT NULL CHECK (policy_version >= 0),
        metrics jsonb NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, step)
      );
      -- Recording a step, callable from any language. The run must exist (RV002: a misspelt run id would record
      -- steps no page shows); a step, version or metric out of shape is RV006. Clients check finiteness first:
      -- JSON has no NaN or Infinity, so those never reach this function as numbers.
      CREATE FUNCTION ratchet_record_training_step(p_run text, p_step int, p_policy_version int, p_metrics jsonb) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE bad text;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM rollout_runs WHERE run_id = p_run) THEN
          RAISE EXCEPTION 'no run %: it is created by the first trajectory submitted to it', p_run USING ERRCODE = 'RV002';
        END IF;
        IF p_step IS NULL OR p_step < 0 OR p_policy_version IS NULL OR p_policy_version < 0 THEN
          RAISE EXCEPTION 'training step % of run %: step and policy version must be non-negative integers (policy version %)',
            p_step, p_run, p_policy_version USING ERRCODE = 'RV006';
        END IF;
        IF jsonb_typeof(p_metrics) IS DISTINCT FROM 'object' THEN
          RAISE EXCEPTION 'training step % of run %: metrics must be an object of numbers by name', p_step, p_run USING ERRCODE = 'RV006';
        END IF;
        SELECT key INTO bad FROM jsonb_each(p_metrics) WHERE jsonb_typeof(value) <> 'number' LIMIT 1;
        IF bad IS NOT NULL THEN
          RAISE EXCEPTION 'training step % of run %: metric % is %, not a number', p_step, p_run, bad, p_metrics -> bad USING ERRCODE = 'RV006';
        END IF;
        INSERT INTO training_steps (run_id, step, policy_version, metrics) VALUES (p_run, p_step, p_policy_version, p_metrics)
        ON CONFLICT (run_id, step) DO UPDATE SET policy_version = excluded.policy_version, metrics = excluded.metrics, recorded_at = now();
      END $$;
    `,
  },
  {
    id: '010_run_columns',
    sql: `
      -- The run a row belongs to, as a column the dashboard can index: every trajectory id is \`<run>/...\`
      -- (src/store/run-views.ts). Generated, so no writer can set it wrong and rows stored before this migration
      -- have it too. Pages of a run at a million trajectories read these indexes instead of scanning id prefixes.
      ALTER TABLE trajectories ADD COLUMN run_id text GENERATED ALWAYS AS (split_part(trajectory_id, '/', 1)) STORED;
      ALTER TABLE monitor_records ADD COLUMN run_id text GENERATED ALWAYS AS (split_part(trajectory_id, '/', 1)) STORED;
      ALTER TABLE trajectory_prompts ADD COLUMN run_id text GENERATED ALWAYS AS (split_part(trajectory_id, '/', 1)) STORED;
      CREATE INDEX trajectories_run_finished ON trajectories (run_id, finished_at DESC, trajectory_id);
      CREATE INDEX trajectories_run_qid ON trajectories (run_id, qid);
      CREATE INDEX monitor_records_run ON monitor_records (run_id);
      CREATE INDEX trajectory_prompts_run ON trajectory_prompts (run_id);
    `,
  },
  // The trajectory list's sort indexes, per-problem counts, and the code judge's detail (src/store/schema/trajectory-search-sql.ts).
  { id: '011_trajectory_search', sql: TRAJECTORY_SEARCH_SQL },
  // The run page's curves as aggregates kept by triggers (src/store/schema/run-curves-sql.ts).
  { id: '012_run_curves', sql: RUN_CURVES_SQL + RUN_CURVES_BACKFILL_SQL },
  // A run's counters kept by triggers as rows are written, and what clients submitted (src/store/schema/run-aggregates-sql.ts).
  { id: '013_run_aggregates', sql: RUN_AGGREGATES_SQL },
  {
    id: '014_environments',
    sql: `
      -- Each turn's environment step as the environment answered it: the observation messages (role and content),
      -- its reward before shaping, whether the episode ended, its info, and the state the next step starts from.
      ALTER TABLE turn_outputs ADD COLUMN environment_step jsonb;
      ALTER TABLE turn_texts ADD COLUMN environment_step jsonb;
      -- The environment a trajectory ran in (NULL: stored before environments, math or code by its request).
      ALTER TABLE trajectories ADD COLUMN environment text;
    `,
  },
  // Each turn's server and the prefix-cache tokens it reported, with a run's totals kept by a trigger (src/store/schema/turn-servers-sql.ts).
  { id: '015_turn_servers', sql: TURN_SERVERS_SQL },
  // The publisher's probe reference per version, and the served-weights ledger (src/store/schema/served-weights-sql.ts).
  { id: '016_served_weights', sql: SERVED_WEIGHTS_SQL },
  // The trajectory list's stale, failed-with-a-verdict and ✓-then-✗ filters from tables and an index kept by the database, and
  // per-problem turn-1 passes (src/store/schema/trajectory-filters-sql.ts).
  { id: '017_trajectory_filters', sql: TRAJECTORY_FILTERS_SQL },
  // Each turn's queue, generation and verification time, and the latency percentiles' one definition (src/store/schema/turn-timings-sql.ts).
  { id: '018_turn_timings', sql: TURN_TIMINGS_SQL },
  // Agent programs' requests, and the context a fork starts (src/store/schema/agent-calls-sql.ts).
  { id: '019_agent_calls', sql: AGENT_CALLS_SQL },
  // The order groups became visible as finished, the completions stream's cursor (src/store/schema/finished-order-sql.ts).
  { id: '020_finished_order', sql: FINISHED_ORDER_SQL },
];

/**
 * Applies pending migrations (`through`: only those up to that one, in order: the dashboard benchmark loads a million
 * rows before the migrations whose triggers count them, and lets their backfills do it in one pass). An advisory lock
 * serialises workers that start at the same moment.
 */
export async function migrate(pool: pg.Pool, options: { through?: string } = {}): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(727274)');
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const applied = new Set((await client.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((row) => row.id));
    const last = options.through === undefined ? MIGRATIONS.length - 1 : MIGRATIONS.findIndex((migration) => migration.id === options.through);
    if (last < 0) throw new Error(`no migration ${options.through}`);
    const pending = MIGRATIONS.slice(0, last + 1).filter((migration) => !applied.has(migration.id));
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

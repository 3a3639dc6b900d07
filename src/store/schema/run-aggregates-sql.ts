/**
 * Migration 011: a run's counters kept up to date as rows are written, so the dashboard, `ratchet runs status` and
 * /metrics read a few rows per run instead of scanning a million (src/store/read/run-aggregates.ts reads them).
 *
 * Statement-level AFTER triggers with transition tables add each statement's rows once: a row an
 * `ON CONFLICT DO NOTHING` skips (a re-run persist, a resubmission) is in no transition table, so counts stay
 * exactly-once. Hot counters are split in 16 shards by trajectory id, so concurrent persists of one run rarely wait
 * on one row, and every trigger takes its counter rows in key order, so two writers never deadlock on them.
 * Shipped: never edit, add a migration.
 */
export const RUN_AGGREGATES_SQL = `
  -- What a client submitted, recorded before it starts the workflows (idempotent by trajectory id): a plain run's
  -- backlog exists nowhere else in Postgres until a worker tokenizes its prompt. Temporal stays the source of truth
  -- for workflow state; this only counts.
  CREATE TABLE run_submissions (
    trajectory_id text PRIMARY KEY,
    run_id text GENERATED ALWAYS AS (split_part(trajectory_id, '/', 1)) STORED,
    submitted_at timestamptz NOT NULL DEFAULT now()
  );

  CREATE FUNCTION ratchet_shard(trajectory_id text) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT hashtext(trajectory_id) & 15 $$;

  -- Trajectories of a run by where they stand. running: working prompt rows (started, not stored).
  CREATE TABLE run_trajectory_counts (
    run_id text NOT NULL,
    shard int NOT NULL,
    submitted bigint NOT NULL DEFAULT 0,
    running bigint NOT NULL DEFAULT 0,
    completed bigint NOT NULL DEFAULT 0,
    failed bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    first_birth bigint,
    last_finished_at timestamptz,
    PRIMARY KEY (run_id, shard)
  );
  CREATE TABLE run_failure_counts (
    run_id text NOT NULL,
    failure_type text NOT NULL,
    failure_class text NOT NULL,
    trajectories bigint NOT NULL,
    PRIMARY KEY (run_id, failure_type, failure_class)
  );
  -- Turns of stored trajectories by verdict (monitor_records), and how many of them succeeded.
  CREATE TABLE run_turn_counts (
    run_id text NOT NULL,
    shard int NOT NULL,
    verdict text NOT NULL,
    turns bigint NOT NULL,
    successes bigint NOT NULL,
    PRIMARY KEY (run_id, verdict, shard)
  );
  -- Stored trajectories and their output tokens per 10-second bucket of finished_at: the recent throughput.
  CREATE TABLE run_throughput (
    run_id text NOT NULL,
    bucket timestamptz NOT NULL,
    shard int NOT NULL,
    trajectories bigint NOT NULL,
    output_tokens bigint NOT NULL,
    PRIMARY KEY (run_id, bucket, shard)
  );
  -- Groups of a training run by state (ratchet_group_state), and their members.
  CREATE TABLE run_group_counts (
    run_id text NOT NULL,
    state text NOT NULL,
    groups bigint NOT NULL,
    members bigint NOT NULL,
    PRIMARY KEY (run_id, state)
  );
  -- What consumers acknowledged: counted at acknowledgement, the one moment data is known to be trained on.
  CREATE TABLE run_consumption (
    run_id text PRIMARY KEY,
    batches bigint NOT NULL,
    groups bigint NOT NULL,
    trajectories bigint NOT NULL,
    stale_trajectories bigint NOT NULL
  );

  -- A group's state, one of: waiting (queued for admission), running, unconsumed (finished, some member
  -- completed), rejected (finished, every member failed), consumed (acknowledged), cancelled.
  CREATE FUNCTION ratchet_group_state(status text, finished_at timestamptz, completed int, consumed_at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN status = 'cancelled' THEN 'cancelled'
                WHEN consumed_at IS NOT NULL THEN 'consumed'
                WHEN finished_at IS NULL THEN CASE WHEN status = 'pending' THEN 'waiting' ELSE 'running' END
                WHEN completed = 0 THEN 'rejected'
                ELSE 'unconsumed' END
  $$;

  CREATE FUNCTION ratchet_count_submissions() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_trajectory_counts AS c (run_id, shard, submitted)
    SELECT run_id, ratchet_shard(trajectory_id), count(*) FROM added GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, shard) DO UPDATE SET submitted = c.submitted + excluded.submitted;
    RETURN NULL;
  END $$;
  CREATE TRIGGER run_submissions_counted AFTER INSERT ON run_submissions REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_submissions();

  CREATE FUNCTION ratchet_count_started() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_trajectory_counts AS c (run_id, shard, running)
    SELECT run_id, ratchet_shard(trajectory_id), count(*) FROM added GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, shard) DO UPDATE SET running = c.running + excluded.running;
    RETURN NULL;
  END $$;
  CREATE TRIGGER trajectory_prompts_counted AFTER INSERT ON trajectory_prompts REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_started();

  CREATE FUNCTION ratchet_count_ended() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_trajectory_counts AS c (run_id, shard, running)
    SELECT run_id, ratchet_shard(trajectory_id), -count(*) FROM removed GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, shard) DO UPDATE SET running = c.running + excluded.running;
    RETURN NULL;
  END $$;
  CREATE TRIGGER trajectory_prompts_uncounted AFTER DELETE ON trajectory_prompts REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_ended();

  CREATE FUNCTION ratchet_count_stored() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_trajectory_counts AS c (run_id, shard, completed, failed, output_tokens, first_birth, last_finished_at)
    SELECT run_id, ratchet_shard(trajectory_id), count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status = 'failed'),
           coalesce(sum(output_tokens), 0), min(birth_time), max(finished_at)
    FROM added GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, shard) DO UPDATE SET completed = c.completed + excluded.completed, failed = c.failed + excluded.failed,
      output_tokens = c.output_tokens + excluded.output_tokens, first_birth = least(c.first_birth, excluded.first_birth),
      last_finished_at = greatest(c.last_finished_at, excluded.last_finished_at);
    -- Rows stored before failure types had none: they count as InternalError, infrastructure, as the persist activity
    -- treats a failure it cannot name.
    INSERT INTO run_failure_counts AS f (run_id, failure_type, failure_class, trajectories)
    SELECT run_id, coalesce(failure_type, 'InternalError'), coalesce(failure_class, 'infrastructure'), count(*)
    FROM added WHERE status = 'failed' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (run_id, failure_type, failure_class) DO UPDATE SET trajectories = f.trajectories + excluded.trajectories;
    INSERT INTO run_throughput AS r (run_id, bucket, shard, trajectories, output_tokens)
    SELECT run_id, date_bin('10 seconds', finished_at, 'epoch'), ratchet_shard(trajectory_id), count(*), coalesce(sum(output_tokens), 0)
    FROM added GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (run_id, bucket, shard) DO UPDATE SET trajectories = r.trajectories + excluded.trajectories, output_tokens = r.output_tokens + excluded.output_tokens;
    RETURN NULL;
  END $$;
  CREATE TRIGGER trajectories_counted AFTER INSERT ON trajectories REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_stored();

  CREATE FUNCTION ratchet_count_turns() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_turn_counts AS t (run_id, verdict, shard, turns, successes)
    SELECT run_id, verdict, ratchet_shard(trajectory_id), count(*), count(*) FILTER (WHERE success) FROM added GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (run_id, verdict, shard) DO UPDATE SET turns = t.turns + excluded.turns, successes = t.successes + excluded.successes;
    RETURN NULL;
  END $$;
  CREATE TRIGGER monitor_records_counted AFTER INSERT ON monitor_records REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_turns();

  -- A group moving between states: minus one in its old state, plus one in its new (an unchanged state nets out).
  CREATE FUNCTION ratchet_apply_group_moves(moves jsonb) RETURNS void LANGUAGE sql AS $$
    INSERT INTO run_group_counts AS g (run_id, state, groups, members)
    SELECT m.run_id, m.state, m.groups, m.members FROM jsonb_to_recordset(moves) AS m(run_id text, state text, groups bigint, members bigint)
    WHERE m.groups <> 0 ORDER BY 1, 2
    ON CONFLICT (run_id, state) DO UPDATE SET groups = g.groups + excluded.groups, members = g.members + excluded.members;
  $$;
  CREATE FUNCTION ratchet_count_groups_added() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM ratchet_apply_group_moves(coalesce((
      SELECT jsonb_agg(m) FROM (SELECT run_id, ratchet_group_state(status, finished_at, completed, consumed_at) AS state, count(*) AS groups, sum(size) AS members
                                FROM added GROUP BY 1, 2) m), '[]'));
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_groups_counted AFTER INSERT ON rollout_groups REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_groups_added();
  CREATE FUNCTION ratchet_count_groups_moved() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM ratchet_apply_group_moves(coalesce((
      SELECT jsonb_agg(m) FROM (
        SELECT run_id, state, sum(n) AS groups, sum(n * size) AS members FROM (
          SELECT run_id, ratchet_group_state(status, finished_at, completed, consumed_at) AS state, size, 1 AS n FROM after_rows
          UNION ALL
          SELECT run_id, ratchet_group_state(status, finished_at, completed, consumed_at), size, -1 FROM before_rows
        ) s GROUP BY 1, 2) m), '[]'));
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_groups_moved AFTER UPDATE ON rollout_groups REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_groups_moved();

  CREATE FUNCTION ratchet_count_batches_added() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_consumption AS c (run_id, batches, groups, trajectories, stale_trajectories)
    SELECT run_id, count(*), sum(groups), sum(trajectories), sum(stale_trajectories) FROM added WHERE acked_at IS NOT NULL GROUP BY 1 ORDER BY 1
    ON CONFLICT (run_id) DO UPDATE SET batches = c.batches + excluded.batches, groups = c.groups + excluded.groups,
      trajectories = c.trajectories + excluded.trajectories, stale_trajectories = c.stale_trajectories + excluded.stale_trajectories;
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_batches_counted AFTER INSERT ON rollout_batches REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_batches_added();
  CREATE FUNCTION ratchet_count_batches_acknowledged() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_consumption AS c (run_id, batches, groups, trajectories, stale_trajectories)
    SELECT a.run_id, count(*), sum(a.groups), sum(a.trajectories), sum(a.stale_trajectories)
    FROM after_rows a JOIN before_rows b USING (batch_id) WHERE a.acked_at IS NOT NULL AND b.acked_at IS NULL GROUP BY 1 ORDER BY 1
    ON CONFLICT (run_id) DO UPDATE SET batches = c.batches + excluded.batches, groups = c.groups + excluded.groups,
      trajectories = c.trajectories + excluded.trajectories, stale_trajectories = c.stale_trajectories + excluded.stale_trajectories;
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_batches_acknowledged AFTER UPDATE ON rollout_batches REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_count_batches_acknowledged();

  -- Cancelling a group cancels it whether it waits or runs: an admitted group still running was left 'admitted'
  -- before, and so showed as admitted, then as rejected. Finished groups keep their state.
  CREATE OR REPLACE FUNCTION ratchet_cancel_groups(p_run text, p_group text) RETURNS SETOF text
  LANGUAGE sql AS $$
    UPDATE rollout_groups SET status = 'cancelled'
    WHERE (p_group IS NULL AND run_id = p_run OR group_id = p_group) AND (status = 'pending' OR status = 'admitted' AND finished_at IS NULL);
    SELECT m.trajectory_id FROM rollout_members m JOIN rollout_groups g USING (group_id)
    WHERE (p_group IS NULL AND g.run_id = p_run OR g.group_id = p_group) AND NOT m.finished ORDER BY m.trajectory_id;
  $$;

  -- A cancelled group is never handed to a trainer, even one that finished with completed members after the cancel
  -- (admission's accepted count leaves it out too). As migration 006's, plus status = 'admitted'.
  CREATE OR REPLACE FUNCTION ratchet_claim_batch(p_run text, p_batch_size int, p_consumer text, p_lease_s double precision, p_partial boolean DEFAULT false)
  RETURNS TABLE (batch_id uuid, policy_version int, lease_expires_at timestamptz, group_id text, trajectory_id text, staleness int, stale boolean)
  LANGUAGE plpgsql AS $$
  #variable_conflict use_column
  DECLARE
    v_bound int;
    v_batch uuid := gen_random_uuid();
    v_version int;
    v_groups text[];
    v_expires timestamptz;
  BEGIN
    SELECT r.max_head_offpolicyness INTO v_bound FROM rollout_runs r WHERE r.run_id = p_run;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'no run %: it is created by the first trajectory submitted to it', p_run USING ERRCODE = 'RV002';
    END IF;
    SELECT array_agg(ready.group_id ORDER BY ready.birth_time, ready.seq) INTO v_groups FROM (
      SELECT g.group_id, g.birth_time, g.seq FROM rollout_groups g
      WHERE g.run_id = p_run AND g.finished_at IS NOT NULL AND g.consumed_at IS NULL AND g.completed > 0 AND g.status <> 'cancelled'
        AND (g.lease_expires_at IS NULL OR g.lease_expires_at < clock_timestamp())
      ORDER BY g.birth_time, g.seq LIMIT p_batch_size FOR UPDATE SKIP LOCKED
    ) ready;
    IF v_groups IS NULL OR (cardinality(v_groups) < p_batch_size AND NOT p_partial) THEN
      RETURN;
    END IF;
    SELECT coalesce(max(pv.version), 0) INTO v_version FROM policy_versions pv;
    v_expires := clock_timestamp() + make_interval(secs => p_lease_s);
    -- Staleness: the version at hand-out minus the trajectory's oldest token version (AReaL's off-policyness).
    UPDATE rollout_members m SET staleness = s.staleness, stale = s.staleness > v_bound
    FROM (
      SELECT t.trajectory_id, greatest(0, v_version - coalesce((SELECT min(v) FROM unnest(t.version_start) v), v_version)) AS staleness
      FROM rollout_members mm JOIN trajectories t ON t.trajectory_id = mm.trajectory_id
      WHERE mm.group_id = ANY(v_groups) AND t.status = 'completed'
    ) s WHERE m.trajectory_id = s.trajectory_id;
    INSERT INTO rollout_batches (batch_id, run_id, consumer, policy_version, groups, trajectories, stale_trajectories, lease_expires_at)
    SELECT v_batch, p_run, p_consumer, v_version, cardinality(v_groups), count(*), count(*) FILTER (WHERE m.stale), v_expires
    FROM rollout_members m JOIN trajectories t ON t.trajectory_id = m.trajectory_id
    WHERE m.group_id = ANY(v_groups) AND t.status = 'completed';
    UPDATE rollout_groups g SET batch_id = v_batch, lease_expires_at = v_expires WHERE g.group_id = ANY(v_groups);
    RETURN QUERY
      SELECT v_batch, v_version, v_expires, m.group_id, m.trajectory_id, m.staleness, m.stale
      FROM rollout_members m JOIN trajectories t ON t.trajectory_id = m.trajectory_id JOIN rollout_groups g ON g.group_id = m.group_id
      WHERE m.group_id = ANY(v_groups) AND t.status = 'completed'
      ORDER BY g.birth_time, g.seq, m.sample;
  END $$;

  -- The counts of every row already stored (the triggers above hold their tables' locks from here to commit, so
  -- no write lands between this and them).
  INSERT INTO run_trajectory_counts (run_id, shard, completed, failed, output_tokens, first_birth, last_finished_at)
  SELECT run_id, ratchet_shard(trajectory_id), count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status = 'failed'),
         coalesce(sum(output_tokens), 0), min(birth_time), max(finished_at)
  FROM trajectories GROUP BY 1, 2;
  INSERT INTO run_trajectory_counts AS c (run_id, shard, running)
  SELECT run_id, ratchet_shard(trajectory_id), count(*) FROM trajectory_prompts GROUP BY 1, 2
  ON CONFLICT (run_id, shard) DO UPDATE SET running = excluded.running;
  INSERT INTO run_failure_counts (run_id, failure_type, failure_class, trajectories)
  SELECT run_id, coalesce(failure_type, 'InternalError'), coalesce(failure_class, 'infrastructure'), count(*) FROM trajectories WHERE status = 'failed' GROUP BY 1, 2, 3;
  INSERT INTO run_throughput (run_id, bucket, shard, trajectories, output_tokens)
  SELECT run_id, date_bin('10 seconds', finished_at, 'epoch'), ratchet_shard(trajectory_id), count(*), coalesce(sum(output_tokens), 0) FROM trajectories GROUP BY 1, 2, 3;
  INSERT INTO run_turn_counts (run_id, verdict, shard, turns, successes)
  SELECT run_id, verdict, ratchet_shard(trajectory_id), count(*), count(*) FILTER (WHERE success) FROM monitor_records GROUP BY 1, 2, 3;
  INSERT INTO run_group_counts (run_id, state, groups, members)
  SELECT run_id, ratchet_group_state(status, finished_at, completed, consumed_at), count(*), sum(size) FROM rollout_groups GROUP BY 1, 2;
  INSERT INTO run_consumption (run_id, batches, groups, trajectories, stale_trajectories)
  SELECT run_id, count(*), sum(groups), sum(trajectories), sum(stale_trajectories) FROM rollout_batches WHERE acked_at IS NOT NULL GROUP BY 1;
`;

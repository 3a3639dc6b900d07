/**
 * Migration 006: the trainer's protocol as SQL functions, so the TypeScript client, the CLI and the Python package
 * (python/ratchet_rollouts) create runs, cancel groups and claim, acknowledge, extend and release batches by the
 * same rules, written once.
 * Errors carry their own SQLSTATE (RV002 unknown run, RV003 lease lost, RV004 unknown batch, RV005 run settings mismatch) so each client
 * maps them to its typed error. Shipped: never edit, add a migration.
 */
export const BATCH_PROTOCOL_SQL = `
  -- Creates a run on first sight; a run that exists must have the same settings (RV005 otherwise).
  CREATE FUNCTION ratchet_ensure_run(p_run text, p_max_head_offpolicyness int, p_batch_size int, p_max_concurrent int) RETURNS void
  LANGUAGE plpgsql AS $$
  DECLARE stored rollout_runs;
  BEGIN
    INSERT INTO rollout_runs (run_id, max_head_offpolicyness, batch_size, max_concurrent)
    VALUES (p_run, p_max_head_offpolicyness, p_batch_size, p_max_concurrent) ON CONFLICT (run_id) DO NOTHING;
    SELECT * INTO stored FROM rollout_runs WHERE run_id = p_run;
    IF (stored.max_head_offpolicyness, stored.batch_size, stored.max_concurrent) IS DISTINCT FROM (p_max_head_offpolicyness, p_batch_size, p_max_concurrent) THEN
      RAISE EXCEPTION 'run % was created with maxHeadOffpolicyness %, batchSize %, maxConcurrent %; this request says maxHeadOffpolicyness %, batchSize %, maxConcurrent %',
        p_run, stored.max_head_offpolicyness, stored.batch_size, stored.max_concurrent, p_max_head_offpolicyness, p_batch_size, p_max_concurrent
        USING ERRCODE = 'RV005';
    END IF;
  END $$;

  -- Cancels a run's groups (p_group NULL) or one group: waiting ones are never admitted; admitted ones end as
  -- their members are cancelled. Returns the unfinished members, whose workflows the caller cancels.
  CREATE FUNCTION ratchet_cancel_groups(p_run text, p_group text) RETURNS SETOF text
  LANGUAGE sql AS $$
    UPDATE rollout_groups SET status = 'cancelled'
    WHERE (p_group IS NULL AND run_id = p_run OR group_id = p_group) AND status = 'pending';
    SELECT m.trajectory_id FROM rollout_members m JOIN rollout_groups g USING (group_id)
    WHERE (p_group IS NULL AND g.run_id = p_run OR g.group_id = p_group) AND NOT m.finished ORDER BY m.trajectory_id;
  $$;

  -- Claims finished groups, oldest birth_time first, for one consumer. SKIP LOCKED lets concurrent consumers
  -- claim side by side without ever sharing a group; a group whose lease ran out is claimable again. Returns one
  -- row per completed trajectory of the claimed groups (failed members are not handed out), group by group, or
  -- no rows when too few groups are ready.
  CREATE FUNCTION ratchet_claim_batch(p_run text, p_batch_size int, p_consumer text, p_lease_s double precision, p_partial boolean DEFAULT false)
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
      WHERE g.run_id = p_run AND g.finished_at IS NOT NULL AND g.consumed_at IS NULL AND g.completed > 0
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

  -- Locks a batch for the protocol's other steps; a malformed or unknown id is RV004.
  CREATE FUNCTION ratchet_lock_batch(p_batch text, OUT batch_groups int, OUT acked timestamptz)
  LANGUAGE plpgsql AS $$
  BEGIN
    IF p_batch !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
      RAISE EXCEPTION '"%" is not a batch id (a UUID printed by consume)', p_batch USING ERRCODE = 'RV004';
    END IF;
    SELECT b.groups, b.acked_at INTO batch_groups, acked FROM rollout_batches b WHERE b.batch_id = p_batch::uuid FOR UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'no batch %', p_batch USING ERRCODE = 'RV004';
    END IF;
  END $$;

  -- Marks a batch consumed: its groups are never handed out again. Acknowledging twice is harmless (returns true
  -- the second time). A batch whose lease ran out is still accepted if no other consumer claimed its groups.
  CREATE FUNCTION ratchet_ack_batch(p_batch text) RETURNS boolean
  LANGUAGE plpgsql AS $$
  DECLARE v_groups int; v_acked timestamptz; v_consumed int;
  BEGIN
    SELECT batch_groups, acked INTO v_groups, v_acked FROM ratchet_lock_batch(p_batch);
    IF v_acked IS NOT NULL THEN
      RETURN true;
    END IF;
    UPDATE rollout_groups SET consumed_at = clock_timestamp() WHERE batch_id = p_batch::uuid AND consumed_at IS NULL;
    GET DIAGNOSTICS v_consumed = ROW_COUNT;
    IF v_consumed <> v_groups THEN
      RAISE EXCEPTION 'batch %: its lease ran out and % of its % groups were handed to another consumer; drop it', p_batch, v_groups - v_consumed, v_groups
        USING ERRCODE = 'RV003';
    END IF;
    UPDATE rollout_batches SET acked_at = clock_timestamp() WHERE batch_id = p_batch::uuid;
    RETURN false;
  END $$;

  -- Extends a claimed batch's lease to now + p_lease_s, for a consumer that needs longer than it first asked.
  CREATE FUNCTION ratchet_extend_lease(p_batch text, p_lease_s double precision) RETURNS timestamptz
  LANGUAGE plpgsql AS $$
  DECLARE v_groups int; v_acked timestamptz; v_held int; v_expires timestamptz := clock_timestamp() + make_interval(secs => p_lease_s);
  BEGIN
    SELECT batch_groups, acked INTO v_groups, v_acked FROM ratchet_lock_batch(p_batch);
    IF v_acked IS NOT NULL THEN
      RAISE EXCEPTION 'batch % is already acknowledged', p_batch USING ERRCODE = 'RV004';
    END IF;
    UPDATE rollout_groups SET lease_expires_at = v_expires WHERE batch_id = p_batch::uuid AND consumed_at IS NULL;
    GET DIAGNOSTICS v_held = ROW_COUNT;
    IF v_held <> v_groups THEN
      RAISE EXCEPTION 'batch %: its lease ran out and % of its % groups were handed to another consumer; drop it', p_batch, v_groups - v_held, v_groups
        USING ERRCODE = 'RV003';
    END IF;
    UPDATE rollout_batches SET lease_expires_at = v_expires WHERE batch_id = p_batch::uuid;
    RETURN v_expires;
  END $$;

  -- Gives a claimed batch's groups back at once (its consumer could not use them): the next consumer claims them
  -- without waiting out the lease, and this batch can no longer be acknowledged. Returns the groups released.
  CREATE FUNCTION ratchet_release_batch(p_batch text) RETURNS int
  LANGUAGE plpgsql AS $$
  DECLARE v_groups int; v_acked timestamptz; v_released int;
  BEGIN
    SELECT batch_groups, acked INTO v_groups, v_acked FROM ratchet_lock_batch(p_batch);
    IF v_acked IS NOT NULL THEN
      RAISE EXCEPTION 'batch % is already acknowledged', p_batch USING ERRCODE = 'RV004';
    END IF;
    UPDATE rollout_groups SET batch_id = NULL, lease_expires_at = NULL WHERE batch_id = p_batch::uuid AND consumed_at IS NULL;
    GET DIAGNOSTICS v_released = ROW_COUNT;
    UPDATE rollout_batches SET lease_expires_at = clock_timestamp() WHERE batch_id = p_batch::uuid;
    RETURN v_released;
  END $$;
`;

/**
 * Migration 013: a run's curves as aggregates kept by triggers, so the run page's poll reads a few rows per version,
 * turn, minute or bin instead of scanning the run's trajectories (a million of them in a long run).
 *
 * Exactly once: statement-level AFTER triggers add each statement's new rows (transition tables): a row that
 * ON CONFLICT DO NOTHING skips (a re-run persist) is in no transition table, so it adds nothing. Groups count once,
 * in the update that sets their finished_at; staleness as each hand-out sets it (a re-claim moves a member).
 * Set-based, so a bulk insert (the migration's backfill, a synthetic benchmark) costs one aggregate statement per
 * table, and the backfill runs the very same SQL over the stored rows.
 *
 * Hot rows: every store of a run adds to the same few rows, split into SHARDS by trajectory id so stores of a run
 * rarely wait on one row. Every statement upserts its rows in key order and the tables in one fixed order, so two
 * writers never lock aggregate rows in opposite orders (no deadlocks).
 */
const SHARDS = 8;
const SHARD = (id: string) => `abs(hashtext(${id})) % ${SHARDS}`;

/**
 * Completed trajectories by the minute or hour they were stored in: the reader takes minutes for a run of up to
 * 12 hours and hours past that, so what it sums grows with neither the run's size nor (much) its duration.
 */
function timeBuckets(source: string, unit: 'minute' | 'hour'): string {
  return `
    INSERT INTO run_${unit}s AS m
    SELECT t.run_id, date_trunc('${unit}', t.finished_at), ${SHARD('t.trajectory_id')}, count(*), count(*) FILTER (WHERE t.successes[1]),
           count(*) FILTER (WHERE true = ANY(t.successes)), coalesce(sum(t.rewards[1]), 0), coalesce(sum(x.reward), 0),
           coalesce(sum(cardinality(t.raw_rewards)), 0), coalesce(sum(x.truncated), 0), coalesce(sum(t.output_tokens), 0)
    FROM ${source} t CROSS JOIN LATERAL (SELECT (SELECT sum(r) FROM unnest(t.raw_rewards) r) AS reward,
                                               (SELECT count(*) FROM unnest(t.seq_no_eos_mask) e WHERE e) AS truncated) x
    WHERE t.status = 'completed' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (run_id, ${unit}, shard) DO UPDATE SET trajectories = m.trajectories + excluded.trajectories,
      first_turn_success = m.first_turn_success + excluded.first_turn_success, any_success = m.any_success + excluded.any_success,
      return_sum = m.return_sum + excluded.return_sum, reward_sum = m.reward_sum + excluded.reward_sum, turns = m.turns + excluded.turns,
      truncated_turns = m.truncated_turns + excluded.truncated_turns, output_tokens = m.output_tokens + excluded.output_tokens;`;
}

/** Completed trajectories' aggregates, from `source`: a relation with trajectories' columns. */
function addTrajectories(source: string): string {
  return `
${timeBuckets(source, 'minute')}
${timeBuckets(source, 'hour')}
    -- A trajectory that ended before generating (context exhausted at turn 1) has no version.
    INSERT INTO run_versions AS r
    SELECT t.run_id, t.version_start[1], ${SHARD('t.trajectory_id')}, count(*), count(*) FILTER (WHERE true = ANY(t.successes)),
           coalesce(sum(t.rewards[1]), 0), coalesce(sum(x.reward), 0), coalesce(sum(cardinality(t.raw_rewards)), 0), coalesce(sum(x.truncated), 0),
           count(*) FILTER (WHERE t.end_reason = 'context_exhausted'), coalesce(sum(t.output_tokens), 0), coalesce(sum(x.span), 0),
           coalesce(max(x.span), 0), count(*) FILTER (WHERE x.span > 0)
    FROM ${source} t CROSS JOIN LATERAL (SELECT (SELECT sum(r) FROM unnest(t.raw_rewards) r) AS reward,
                                               (SELECT count(*) FROM unnest(t.seq_no_eos_mask) e WHERE e) AS truncated,
                                               (SELECT max(v) FROM unnest(t.version_end) v) - t.version_start[1] AS span) x
    WHERE t.status = 'completed' AND t.version_start[1] IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (run_id, version, shard) DO UPDATE SET trajectories = r.trajectories + excluded.trajectories, any_success = r.any_success + excluded.any_success,
      return_sum = r.return_sum + excluded.return_sum, reward_sum = r.reward_sum + excluded.reward_sum, turns = r.turns + excluded.turns,
      truncated_turns = r.truncated_turns + excluded.truncated_turns, context_exhausted = r.context_exhausted + excluded.context_exhausted,
      output_tokens = r.output_tokens + excluded.output_tokens, span_sum = r.span_sum + excluded.span_sum,
      span_max = greatest(r.span_max, excluded.span_max), straddling = r.straddling + excluded.straddling;
    INSERT INTO run_version_turns AS r
    SELECT t.run_id, t.version_start[1], u.turn::int - 1, ${SHARD('t.trajectory_id')}, count(*), count(*) FILTER (WHERE u.success),
           coalesce(sum(u.reward), 0), count(*) FILTER (WHERE u.no_eos)
    FROM ${source} t CROSS JOIN LATERAL unnest(t.successes, t.raw_rewards, t.seq_no_eos_mask) WITH ORDINALITY AS u(success, reward, no_eos, turn)
    WHERE t.status = 'completed' AND t.version_start[1] IS NOT NULL AND u.turn <= cardinality(t.raw_rewards) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (run_id, version, turn, shard) DO UPDATE SET turns = r.turns + excluded.turns, successes = r.successes + excluded.successes,
      reward_sum = r.reward_sum + excluded.reward_sum, truncated = r.truncated + excluded.truncated;`;
}

/** Turns' aggregates, from `source`: a relation with monitor_records' columns. */
function addTurns(source: string): string {
  return `
    INSERT INTO run_turn_versions AS r
    SELECT m.run_id, m.version_end, m.turn, ${SHARD('m.trajectory_id')}, count(*), count(*) FILTER (WHERE m.success), sum(m.answer_len)
    FROM ${source} m GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (run_id, version, turn, shard) DO UPDATE SET turns = r.turns + excluded.turns, successes = r.successes + excluded.successes,
      output_tokens = r.output_tokens + excluded.output_tokens;
    INSERT INTO run_length_bins AS r
    SELECT m.run_id, m.answer_len / 16, ${SHARD('m.trajectory_id')}, count(*) FROM ${source} m GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (run_id, bin, shard) DO UPDATE SET turns = r.turns + excluded.turns;`;
}

/**
 * Finished groups' signal, from `source`: a relation with rollout_groups' columns, each a group that has just
 * finished. Read in the statement that finishes the group (its last member's transaction), which sees the others.
 */
function addGroups(source: string): string {
  const signal = `
    SELECT g.run_id, g.group_id, g.finished_at, count(*) AS n, min(t.rewards[1]) AS lo, max(t.rewards[1]) AS hi, avg(t.rewards[1]) AS mean,
           min(t.version_start[1]) AS version
    FROM ${source} g JOIN rollout_members m ON m.group_id = g.group_id JOIN trajectories t ON t.trajectory_id = m.trajectory_id
    WHERE t.status = 'completed' AND t.rewards[1] IS NOT NULL GROUP BY 1, 2, 3`;
  return `
    INSERT INTO run_group_versions AS r
    SELECT s.run_id, s.version, count(*), count(*) FILTER (WHERE s.lo = s.hi) FROM (${signal}) s WHERE s.version IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, version) DO UPDATE SET groups = r.groups + excluded.groups, no_signal = r.no_signal + excluded.no_signal;
    INSERT INTO run_group_minutes AS r
    SELECT s.run_id, date_trunc('minute', s.finished_at), count(*), count(*) FILTER (WHERE s.lo = s.hi) FROM (${signal}) s GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, minute) DO UPDATE SET groups = r.groups + excluded.groups, no_signal = r.no_signal + excluded.no_signal;
    INSERT INTO run_group_hours AS r
    SELECT s.run_id, date_trunc('hour', s.finished_at), count(*), count(*) FILTER (WHERE s.lo = s.hi) FROM (${signal}) s GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, hour) DO UPDATE SET groups = r.groups + excluded.groups, no_signal = r.no_signal + excluded.no_signal;
    INSERT INTO run_advantage_bins AS r
    SELECT s.run_id, round((t.rewards[1] - s.mean) / 0.05)::int, count(*)
    FROM (${signal}) s JOIN rollout_members m ON m.group_id = s.group_id JOIN trajectories t ON t.trajectory_id = m.trajectory_id
    WHERE t.status = 'completed' AND t.rewards[1] IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, bin) DO UPDATE SET samples = r.samples + excluded.samples;`;
}

/** Staleness moves, from `moves`: a relation of (group_id, staleness, delta), +1 into a value and −1 out of one. */
function moveStaleness(moves: string): string {
  return `
    INSERT INTO run_staleness AS r
    SELECT g.run_id, d.staleness, sum(d.delta) FROM (${moves}) d JOIN rollout_groups g ON g.group_id = d.group_id GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (run_id, staleness) DO UPDATE SET members = r.members + excluded.members;`;
}

export const RUN_CURVES_SQL = `
  -- Completed trajectories by the policy version of their first generated token.
  CREATE TABLE run_versions (
    run_id text NOT NULL, version int NOT NULL, shard int NOT NULL,
    trajectories bigint NOT NULL, any_success bigint NOT NULL, return_sum float8 NOT NULL, reward_sum float8 NOT NULL,
    turns bigint NOT NULL, truncated_turns bigint NOT NULL, context_exhausted bigint NOT NULL, output_tokens bigint NOT NULL,
    span_sum bigint NOT NULL, span_max int NOT NULL, straddling bigint NOT NULL,
    PRIMARY KEY (run_id, version, shard)
  );
  -- Their turns, by the same version: success, reward r_t, and turns cut by the length limit (seq_no_eos_mask).
  CREATE TABLE run_version_turns (
    run_id text NOT NULL, version int NOT NULL, turn int NOT NULL, shard int NOT NULL,
    turns bigint NOT NULL, successes bigint NOT NULL, reward_sum float8 NOT NULL, truncated bigint NOT NULL,
    PRIMARY KEY (run_id, version, turn, shard)
  );
  -- Turns by the policy version of the turn's last token (monitor_records): success and output length.
  CREATE TABLE run_turn_versions (
    run_id text NOT NULL, version int NOT NULL, turn int NOT NULL, shard int NOT NULL,
    turns bigint NOT NULL, successes bigint NOT NULL, output_tokens bigint NOT NULL,
    PRIMARY KEY (run_id, version, turn, shard)
  );
  -- Output lengths of turns in bins of 16 tokens; the reader merges bins into as many bars as it draws.
  CREATE TABLE run_length_bins (
    run_id text NOT NULL, bin int NOT NULL, shard int NOT NULL, turns bigint NOT NULL,
    PRIMARY KEY (run_id, bin, shard)
  );
  -- Completed trajectories by the minute and by the hour they were stored in (src/store/run-curves.ts reads one).
  CREATE TABLE run_minutes (
    run_id text NOT NULL, minute timestamptz NOT NULL, shard int NOT NULL,
    trajectories bigint NOT NULL, first_turn_success bigint NOT NULL, any_success bigint NOT NULL, return_sum float8 NOT NULL,
    reward_sum float8 NOT NULL, turns bigint NOT NULL, truncated_turns bigint NOT NULL, output_tokens bigint NOT NULL,
    PRIMARY KEY (run_id, minute, shard)
  );
  CREATE TABLE run_hours (
    run_id text NOT NULL, hour timestamptz NOT NULL, shard int NOT NULL,
    trajectories bigint NOT NULL, first_turn_success bigint NOT NULL, any_success bigint NOT NULL, return_sum float8 NOT NULL,
    reward_sum float8 NOT NULL, turns bigint NOT NULL, truncated_turns bigint NOT NULL, output_tokens bigint NOT NULL,
    PRIMARY KEY (run_id, hour, shard)
  );
  -- Finished groups (at least one completed member): how many gave no training signal (every completed member the
  -- same return R₀, so every group-relative advantage is 0), by the group's oldest first-token version, by minute
  -- and by hour.
  CREATE TABLE run_group_versions (
    run_id text NOT NULL, version int NOT NULL, groups bigint NOT NULL, no_signal bigint NOT NULL, PRIMARY KEY (run_id, version)
  );
  CREATE TABLE run_group_minutes (
    run_id text NOT NULL, minute timestamptz NOT NULL, groups bigint NOT NULL, no_signal bigint NOT NULL, PRIMARY KEY (run_id, minute)
  );
  CREATE TABLE run_group_hours (
    run_id text NOT NULL, hour timestamptz NOT NULL, groups bigint NOT NULL, no_signal bigint NOT NULL, PRIMARY KEY (run_id, hour)
  );
  -- Group-relative advantages R₀ − mean R₀ of the group (not divided by the std), in bins
  -- 0.05 wide centred on bin × 0.05, so a zero advantage has a bin of its own.
  CREATE TABLE run_advantage_bins (
    run_id text NOT NULL, bin int NOT NULL, samples bigint NOT NULL, PRIMARY KEY (run_id, bin)
  );
  -- Members by their staleness at their latest hand-out (rollout_members.staleness).
  CREATE TABLE run_staleness (
    run_id text NOT NULL, staleness int NOT NULL, members bigint NOT NULL, PRIMARY KEY (run_id, staleness)
  );


  CREATE FUNCTION ratchet_curves_trajectories_stored() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN ${addTrajectories('added')} RETURN NULL; END $$;
  CREATE TRIGGER trajectories_curves AFTER INSERT ON trajectories REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_curves_trajectories_stored();

  CREATE FUNCTION ratchet_curves_turns_stored() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN ${addTurns('added')} RETURN NULL; END $$;
  CREATE TRIGGER monitor_records_curves AFTER INSERT ON monitor_records REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_curves_turns_stored();

  -- A group counts in the update that sets its finished_at; one inserted already finished (an import, a synthetic
  -- benchmark) as it arrives, with whatever members exist by then.
  CREATE FUNCTION ratchet_curves_groups_finished() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      ${addGroups('(SELECT n.* FROM after_rows n JOIN before_rows o USING (group_id) WHERE o.finished_at IS NULL AND n.finished_at IS NOT NULL)')}
    ELSE
      ${addGroups('(SELECT * FROM after_rows WHERE finished_at IS NOT NULL)')}
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_groups_curves AFTER UPDATE ON rollout_groups REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_curves_groups_finished();
  CREATE TRIGGER rollout_groups_curves_inserted AFTER INSERT ON rollout_groups REFERENCING NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_curves_groups_finished();

  CREATE FUNCTION ratchet_curves_members_handed_out() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      ${moveStaleness(`SELECT n.group_id, n.staleness, 1 AS delta FROM after_rows n JOIN before_rows o USING (trajectory_id)
        WHERE n.staleness IS DISTINCT FROM o.staleness AND n.staleness IS NOT NULL
        UNION ALL SELECT o.group_id, o.staleness, -1 FROM after_rows n JOIN before_rows o USING (trajectory_id)
        WHERE n.staleness IS DISTINCT FROM o.staleness AND o.staleness IS NOT NULL`)}
    ELSE
      ${moveStaleness('SELECT group_id, staleness, 1 AS delta FROM after_rows WHERE staleness IS NOT NULL')}
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_members_curves AFTER UPDATE ON rollout_members REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_curves_members_handed_out();
  CREATE TRIGGER rollout_members_curves_inserted AFTER INSERT ON rollout_members REFERENCING NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_curves_members_handed_out();
`;

/** The rows stored before migration 012, through the same SQL the triggers run (on empty aggregates). */
export const RUN_CURVES_BACKFILL_SQL = `
  ${addTrajectories('trajectories')}
  ${addTurns('monitor_records')}
  ${addGroups('(SELECT * FROM rollout_groups WHERE finished_at IS NOT NULL)')}
  ${moveStaleness('SELECT group_id, staleness, 1 AS delta FROM rollout_members WHERE staleness IS NOT NULL')}
`;

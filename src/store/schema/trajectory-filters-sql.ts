/**
 * Migration 017: the two filters of the trajectory list that read most of a large run row by row (issue 35), each
 * given a small table kept by triggers, so a page is an index range scan.
 *
 * - *stale* (a member over η at its latest hand-out, rollout_members.stale, the run page's one definition): stale
 *   trajectories are old ones (the newest are not handed out yet), so walking the run newest first and probing each
 *   row's member read ~100,000 rows at a million before finding a page. run_stale_trajectories holds a run's stale
 *   trajectories by finish time; a hand-out that flags a member adds it, one that clears the flag (a batch re-handed
 *   out after its lease expired, at a newer version) removes it.
 * - *failed and a verdict*: a failed trajectory's judged turns are in turn_texts only (monitor_records are written for
 *   completed ones), and the run's failed rows were probed one by one for the verdict (every one of them when none
 *   matches). failed_turn_verdicts holds each failed trajectory's verdicts, one row per (trajectory, verdict).
 *
 * Both are written in the transaction that writes what they summarise (the hand-out; the failed persist), so the list
 * never disagrees with the rows.
 *
 * Also: the *✓ then ✗* filter (a correct turn followed, later, by a turn not correct) from a partial index, so a run
 * where it is rare is not read whole; and the per-problem counts gain the samples solved at turn 1 (first_solved,
 * beside solved: some turn correct), kept by the same insert trigger. Shipped: never edit, add a migration.
 */
export const TRAJECTORY_FILTERS_SQL = `
  CREATE TABLE run_stale_trajectories (
    trajectory_id text PRIMARY KEY,
    run_id text NOT NULL,
    finished_at timestamptz NOT NULL
  );
  CREATE INDEX run_stale_trajectories_list ON run_stale_trajectories (run_id, finished_at, trajectory_id);
  INSERT INTO run_stale_trajectories (trajectory_id, run_id, finished_at)
  SELECT t.trajectory_id, t.run_id, t.finished_at FROM rollout_members m JOIN trajectories t ON t.trajectory_id = m.trajectory_id WHERE m.stale;

  CREATE FUNCTION ratchet_stale_trajectories() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      DELETE FROM run_stale_trajectories s USING after_rows n WHERE s.trajectory_id = n.trajectory_id AND n.stale IS NOT TRUE;
    END IF;
    INSERT INTO run_stale_trajectories (trajectory_id, run_id, finished_at)
    SELECT t.trajectory_id, t.run_id, t.finished_at FROM after_rows n JOIN trajectories t ON t.trajectory_id = n.trajectory_id
    WHERE n.stale ORDER BY 1
    ON CONFLICT (trajectory_id) DO NOTHING;
    RETURN NULL;
  END $$;
  CREATE TRIGGER rollout_members_stale_list AFTER UPDATE ON rollout_members REFERENCING NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_stale_trajectories();
  CREATE TRIGGER rollout_members_stale_list_inserted AFTER INSERT ON rollout_members REFERENCING NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_stale_trajectories();

  CREATE TABLE failed_turn_verdicts (
    trajectory_id text NOT NULL,
    verdict text NOT NULL,
    run_id text NOT NULL,
    PRIMARY KEY (trajectory_id, verdict)
  );
  CREATE INDEX failed_turn_verdicts_run ON failed_turn_verdicts (run_id, verdict);
  INSERT INTO failed_turn_verdicts (trajectory_id, verdict, run_id)
  SELECT DISTINCT t.trajectory_id, x.verdict, t.run_id FROM trajectories t JOIN turn_texts x ON x.trajectory_id = t.trajectory_id
  WHERE t.status = 'failed' AND x.verdict IS NOT NULL;

  CREATE FUNCTION ratchet_failed_turn_verdicts() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO failed_turn_verdicts (trajectory_id, verdict, run_id)
    SELECT DISTINCT t.trajectory_id, n.verdict, t.run_id FROM added n JOIN trajectories t ON t.trajectory_id = n.trajectory_id
    WHERE t.status = 'failed' AND n.verdict IS NOT NULL ORDER BY 1, 2
    ON CONFLICT DO NOTHING;
    RETURN NULL;
  END $$;
  CREATE TRIGGER turn_texts_failed_verdicts AFTER INSERT ON turn_texts REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION ratchet_failed_turn_verdicts();

  -- Some turn correct, then a later turn not correct (wrong, no answer, timeout…): the trajectory regressed.
  CREATE FUNCTION ratchet_correct_then_wrong(successes boolean[]) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN true = ANY(successes) THEN array_position(successes, false, array_position(successes, true)) IS NOT NULL ELSE false END;
  CREATE INDEX trajectories_list_correct_then_wrong ON trajectories (run_id, finished_at, trajectory_id) WHERE ratchet_correct_then_wrong(successes);

  ALTER TABLE run_problems ADD COLUMN first_solved int NOT NULL DEFAULT 0;
  UPDATE run_problems p SET first_solved = x.n
  FROM (SELECT run_id, qid, count(*)::int AS n FROM trajectories WHERE successes[1] GROUP BY 1, 2) x WHERE p.run_id = x.run_id AND p.qid = x.qid;
  CREATE OR REPLACE FUNCTION ratchet_count_run_problem() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_problems AS p (run_id, qid, samples, failed, solved, return_sum, first_solved)
    VALUES (NEW.run_id, NEW.qid, 1, (NEW.status = 'failed')::int, coalesce(true = ANY(NEW.successes), false)::int, coalesce(NEW.rewards[1], 0),
            coalesce(NEW.successes[1], false)::int)
    ON CONFLICT (run_id, qid) DO UPDATE SET samples = p.samples + 1, failed = p.failed + excluded.failed,
      solved = p.solved + excluded.solved, return_sum = p.return_sum + excluded.return_sum, first_solved = p.first_solved + excluded.first_solved;
    RETURN NULL;
  END $$;
`;

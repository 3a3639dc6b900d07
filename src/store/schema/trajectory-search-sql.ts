/**
 * The sort keys of the trajectory list, as SQL over `trajectories`. The migration indexes these very expressions
 * (run_id, key, trajectory_id), so a page of a million-row run is an index range scan whichever key is chosen.
 */
export const SORT_KEYS = {
  finished: { sql: 'finished_at', type: 'timestamptz' },
  /** R₀, the trajectory's return; a failed trajectory (no rewards) sorts below every number. */
  reward: { sql: `coalesce(rewards[1], '-Infinity'::float8)`, type: 'float8' },
  successes: { sql: 'coalesce(cardinality(array_positions(successes, true)), 0)', type: 'int' },
  outputTokens: { sql: 'output_tokens', type: 'int' },
  turns: { sql: 'num_turns', type: 'int' },
} as const;

export type SortKey = keyof typeof SORT_KEYS;

/** Migration 012: the list's sort indexes, per-problem counts kept at insert, and the code judge's detail per turn. */
export const TRAJECTORY_SEARCH_SQL = `
  ${Object.entries(SORT_KEYS)
    .map(([name, key]) => `CREATE INDEX trajectories_list_${name.toLowerCase()} ON trajectories (run_id, (${key.sql}), trajectory_id);`)
    .join('\n  ')}
  -- Filters no sort index serves: truncated trajectories (rare, so a partial index), and a policy version (a version's
  -- rows sit deep in a newest-first scan: the GIN index finds them directly).
  CREATE INDEX trajectories_list_truncated ON trajectories (run_id, finished_at, trajectory_id) WHERE true = ANY(seq_no_eos_mask);
  CREATE INDEX trajectories_version_end ON trajectories USING gin (version_end);
  -- Failed trajectories are few: their own index keeps "failed and <something rare>" from reading the whole run.
  CREATE INDEX trajectories_list_failed ON trajectories (run_id, finished_at, trajectory_id) WHERE status = 'failed';
  -- Per problem of a run: samples stored, failed, solved (some turn correct) and the sum of returns. Kept by an AFTER
  -- INSERT trigger, so the per-problem table and the list's total cost one row per problem, never a scan of the run;
  -- a re-run persist whose ON CONFLICT DO NOTHING skips the insert fires nothing, so each trajectory counts once.
  CREATE TABLE run_problems (
    run_id text NOT NULL,
    qid text NOT NULL,
    samples int NOT NULL DEFAULT 0,
    failed int NOT NULL DEFAULT 0,
    solved int NOT NULL DEFAULT 0,
    return_sum double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, qid)
  );
  -- Every run that holds a problem (the search box's cross-run qid search).
  CREATE INDEX run_problems_qid ON run_problems (qid);
  INSERT INTO run_problems (run_id, qid, samples, failed, solved, return_sum)
  SELECT run_id, qid, count(*), count(*) FILTER (WHERE status = 'failed'), count(*) FILTER (WHERE true = ANY(successes)), coalesce(sum(rewards[1]), 0)
  FROM trajectories GROUP BY run_id, qid;
  CREATE FUNCTION ratchet_count_run_problem() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO run_problems AS p (run_id, qid, samples, failed, solved, return_sum)
    VALUES (NEW.run_id, NEW.qid, 1, (NEW.status = 'failed')::int, coalesce(true = ANY(NEW.successes), false)::int, coalesce(NEW.rewards[1], 0))
    ON CONFLICT (run_id, qid) DO UPDATE SET samples = p.samples + 1, failed = p.failed + excluded.failed,
      solved = p.solved + excluded.solved, return_sum = p.return_sum + excluded.return_sum;
    RETURN NULL;
  END $$;
  CREATE TRIGGER trajectories_count_run_problem AFTER INSERT ON trajectories FOR EACH ROW EXECUTE FUNCTION ratchet_count_run_problem();
  -- Why a code turn was judged as it was (which test, expected against actual, the traceback), bounded by the writer.
  ALTER TABLE turn_outputs ADD COLUMN verdict_detail text;
  ALTER TABLE turn_texts ADD COLUMN verdict_detail text;
`;

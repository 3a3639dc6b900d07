import type pg from 'pg';

/** What the search box's text names: exact ids first, then runs and problems that contain it. */
export interface IdSearchResult {
  trajectory: string | null;
  group: string | null;
  run: string | null;
  /** Runs holding a problem with exactly this qid. */
  qidRuns: { runId: string; samples: number }[];
  runsContaining: string[];
  /** Problems whose qid contains the text, with one run that holds each. */
  qidsContaining: { qid: string; runId: string; runs: number }[];
}

const LIMIT = 50;

/**
 * Resolves the text against every kind of id, each by an index: a trajectory (stored, running or a group member),
 * a group (training group, or a plain run's `<run>/<qid>`), a run, a qid across runs, and substrings of run ids and
 * qids (read from the per-problem counts, one row per problem and run, never from the trajectories).
 */
export async function searchIds(pool: pg.Pool, text: string): Promise<IdSearchResult> {
  const slash = text.indexOf('/');
  const [trajectory, group, run, qidRuns, runsContaining, qidsContaining] = await Promise.all([
    pool.query(
      `SELECT 1 FROM trajectories WHERE trajectory_id = $1 UNION ALL SELECT 1 FROM trajectory_prompts WHERE trajectory_id = $1
       UNION ALL SELECT 1 FROM rollout_members WHERE trajectory_id = $1 LIMIT 1`,
      [text],
    ),
    pool.query(`SELECT 1 FROM rollout_groups WHERE group_id = $1 UNION ALL SELECT 1 FROM run_problems WHERE run_id = $2 AND qid = $3 LIMIT 1`, [
      text,
      slash > 0 ? text.slice(0, slash) : null,
      slash > 0 ? text.slice(slash + 1) : null,
    ]),
    pool.query(
      `SELECT 1 FROM rollout_runs WHERE run_id = $1 UNION ALL (SELECT 1 FROM run_problems WHERE run_id = $1 LIMIT 1)
       UNION ALL (SELECT 1 FROM trajectory_prompts WHERE run_id = $1 LIMIT 1) LIMIT 1`,
      [text],
    ),
    pool.query<{ run_id: string; samples: number }>(
      'SELECT run_id, samples FROM run_problems WHERE qid = $1 ORDER BY samples DESC, run_id LIMIT $2',
      [text, LIMIT],
    ),
    pool.query<{ run_id: string }>(
      `SELECT run_id FROM (SELECT run_id FROM rollout_runs UNION SELECT DISTINCT run_id FROM run_problems) runs
       WHERE strpos(lower(run_id), lower($1)) > 0 ORDER BY run_id LIMIT $2`,
      [text, LIMIT],
    ),
    pool.query<{ qid: string; run_id: string; runs: number }>(
      `SELECT qid, min(run_id) AS run_id, count(*)::int AS runs FROM run_problems WHERE strpos(lower(qid), lower($1)) > 0 GROUP BY qid ORDER BY qid LIMIT $2`,
      [text, LIMIT],
    ),
  ]);
  return {
    trajectory: trajectory.rows.length > 0 ? text : null,
    group: group.rows.length > 0 ? text : null,
    run: run.rows.length > 0 ? text : null,
    qidRuns: qidRuns.rows.map((row) => ({ runId: row.run_id, samples: row.samples })),
    runsContaining: runsContaining.rows.map((row) => row.run_id),
    qidsContaining: qidsContaining.rows.map((row) => ({ qid: row.qid, runId: row.run_id, runs: row.runs })),
  };
}

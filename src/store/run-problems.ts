import type pg from 'pg';

/** One problem of a run: its stored samples and how many solved it (some turn correct), from the per-problem counts. */
export interface RunProblem {
  runId: string;
  qid: string;
  samples: number;
  failed: number;
  solved: number;
  /** solved / samples. */
  passRate: number;
  /** Mean R₀ over the samples (a failed one counts 0). */
  meanReturn: number;
}

export type ProblemSort = 'qid' | 'samples' | 'passRate' | 'meanReturn' | 'failed';

const ORDER: Record<ProblemSort, string> = {
  qid: 'qid', samples: 'samples', failed: 'failed',
  passRate: 'solved::float8 / nullif(samples, 0)', meanReturn: 'return_sum / nullif(samples, 0)',
};

/** A run's problems, sorted (one row per problem: a run's problem table is read whole, never its trajectories). */
export async function runProblems(pool: pg.Pool, runId: string, sort: ProblemSort, direction: 'asc' | 'desc', qidContains?: string, limit = 500): Promise<{ problems: RunProblem[]; count: number }> {
  const { rows } = await pool.query(
    `SELECT *, count(*) OVER () AS total FROM run_problems WHERE run_id = $1 AND ($2::text IS NULL OR strpos(qid, $2) > 0)
     ORDER BY ${ORDER[sort]} ${direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST, qid LIMIT $3`,
    [runId, qidContains ?? null, limit],
  );
  return { problems: rows.map(problemOf), count: rows.length === 0 ? 0 : Number(rows[0].total) };
}

/** Every run that holds this problem (exact qid), most samples first. */
export async function problemAcrossRuns(pool: pg.Pool, qid: string): Promise<RunProblem[]> {
  const { rows } = await pool.query('SELECT * FROM run_problems WHERE qid = $1 ORDER BY samples DESC, run_id LIMIT 200', [qid]);
  return rows.map(problemOf);
}

function problemOf(row: Record<string, any>): RunProblem {
  return {
    runId: row.run_id, qid: row.qid, samples: row.samples, failed: row.failed, solved: row.solved,
    passRate: row.samples > 0 ? row.solved / row.samples : 0, meanReturn: row.samples > 0 ? row.return_sum / row.samples : 0,
  };
}

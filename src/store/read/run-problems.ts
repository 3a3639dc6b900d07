import type pg from 'pg';
import { FailureType } from '../../trajectory/failure.js';

/**
 * One problem of a run: the samples that were attempted and how many solved it (some turn correct), from the
 * per-problem counts. A cancelled sample was never attempted (its group or workflow was cancelled, often before it
 * started): it counts in neither the samples, the failures, the pass rate nor the mean return, only in `cancelled`.
 */
export interface RunProblem {
  runId: string;
  qid: string;
  /** Stored samples, cancelled ones left out. */
  samples: number;
  /** Failed samples, cancelled ones left out. */
  failed: number;
  cancelled: number;
  /** Samples with some turn correct. */
  solved: number;
  /** Samples whose first turn was correct (migration 017; 0 for samples stored before it on a database migrated since). */
  firstSolved: number;
  /** solved / samples: correct at any turn; null when every sample was cancelled. */
  passRate: number | null;
  /** firstSolved / samples: correct at turn 1; null when every sample was cancelled. */
  firstPassRate: number | null;
  /** Mean R₀ over the samples (a failed one counts 0); null when every sample was cancelled. */
  meanReturn: number | null;
}

export type ProblemSort = 'qid' | 'samples' | 'firstPassRate' | 'passRate' | 'meanReturn' | 'failed';

/** Failure types that mean "not attempted": the sample was cancelled, not failed by the model or the machine. */
export const CANCELLED_FAILURES: readonly string[] = [FailureType.Cancelled, FailureType.GroupCancelled];

const ORDER: Record<ProblemSort, string> = {
  qid: 'qid',
  samples: 'samples',
  failed: 'failed',
  passRate: 'solved::float8 / nullif(samples, 0)',
  firstPassRate: 'first_solved::float8 / nullif(samples, 0)',
  meanReturn: 'return_sum / nullif(samples, 0)',
};

/**
 * A run's problems, sorted (one row per problem: a run's problem table is read whole, never its trajectories). Only a
 * run with cancelled samples (its per-type failure counts say so) has them counted per problem, from its failed rows
 * alone (a partial index holds them): a run without any reads no trajectory.
 */
export async function runProblems(
  pool: pg.Pool,
  runId: string,
  sort: ProblemSort,
  direction: 'asc' | 'desc',
  qidContains?: string,
  limit = 500,
): Promise<{ problems: RunProblem[]; count: number }> {
  const {
    rows: [cancelledRows],
  } = await pool.query<{ n: string | null }>(
    'SELECT sum(trajectories) AS n FROM run_failure_counts WHERE run_id = $1 AND failure_type = ANY($2::text[])',
    [runId, CANCELLED_FAILURES],
  );
  const anyCancelled = Number(cancelledRows?.n ?? 0) > 0;
  const { rows } = await pool.query(
    `WITH cancelled AS (
       SELECT qid, count(*)::int AS n FROM trajectories
       WHERE $5 AND run_id = $1 AND status = 'failed' AND failure_type = ANY($4::text[]) GROUP BY qid
     ), problems AS (
       SELECT p.run_id, p.qid, p.samples - coalesce(c.n, 0) AS samples, p.failed - coalesce(c.n, 0) AS failed, coalesce(c.n, 0) AS cancelled,
              p.solved, p.first_solved, p.return_sum
       FROM run_problems p LEFT JOIN cancelled c ON c.qid = p.qid
       WHERE p.run_id = $1 AND ($2::text IS NULL OR strpos(lower(p.qid), lower($2)) > 0)
     )
     SELECT *, count(*) OVER () AS total FROM problems
     ORDER BY ${ORDER[sort]} ${direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST, qid LIMIT $3`,
    [runId, qidContains ?? null, limit, CANCELLED_FAILURES, anyCancelled],
  );
  return { problems: rows.map(problemOf), count: rows.length === 0 ? 0 : Number(rows[0].total) };
}

/** Every run that holds this problem (exact qid), most samples first; cancelled samples counted apart, as above. */
export async function problemAcrossRuns(pool: pg.Pool, qid: string): Promise<RunProblem[]> {
  const { rows } = await pool.query(
    `SELECT p.run_id, p.qid, p.samples - c.n AS samples, p.failed - c.n AS failed, c.n AS cancelled, p.solved, p.first_solved, p.return_sum
     FROM run_problems p CROSS JOIN LATERAL (
       SELECT count(*)::int AS n FROM trajectories t WHERE t.run_id = p.run_id AND t.qid = p.qid AND t.status = 'failed' AND t.failure_type = ANY($2::text[])) c
     WHERE p.qid = $1 ORDER BY samples DESC, p.run_id LIMIT 200`,
    [qid, CANCELLED_FAILURES],
  );
  return rows.map(problemOf);
}

function problemOf(row: Record<string, any>): RunProblem {
  return {
    runId: row.run_id,
    qid: row.qid,
    samples: row.samples,
    failed: row.failed,
    cancelled: row.cancelled,
    solved: row.solved,
    firstSolved: row.first_solved,
    passRate: row.samples > 0 ? row.solved / row.samples : null,
    firstPassRate: row.samples > 0 ? row.first_solved / row.samples : null,
    meanReturn: row.samples > 0 ? row.return_sum / row.samples : null,
  };
}

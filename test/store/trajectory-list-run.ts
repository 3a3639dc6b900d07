import type pg from 'pg';
import { ensureRun } from '../../src/store/write/rollout-groups.js';

/** One stored trajectory of the list fixture: per-turn verdicts and whether each turn hit the length limit. */
export interface ListedTrajectory {
  id: string;
  qid: string;
  status?: 'completed' | 'failed';
  verdicts: string[];
  truncated?: boolean[];
  outputTokens: number;
  /** Seconds after the fixture's epoch it finished. */
  finishedAt: number;
  failureType?: string;
  details?: (string | null)[];
}

const EPOCH = Date.parse('2026-01-01T00:00:00Z');

/**
 * A plain run `math` whose qids hold `/` (as the project's MATH and code samples do): 3 samples of `algebra/3`,
 * 2 of `algebra/10`, 1 of `geometry/1`, one failed, one running (`math/algebra/3/3`), with verdicts including
 * `runtime_error`, one truncated turn. A training run `train` with group `train/q1` (every member staleness 0, one
 * stale) and a third run `other` holding `algebra/3` too, for the cross-run search.
 */
export const LISTED: readonly ListedTrajectory[] = [
  { id: 'math/algebra/3/0', qid: 'algebra/3', verdicts: ['wrong', 'correct'], outputTokens: 300, finishedAt: 10 },
  { id: 'math/algebra/3/1', qid: 'algebra/3', verdicts: ['correct'], outputTokens: 100, finishedAt: 20 },
  {
    id: 'math/algebra/3/2',
    qid: 'algebra/3',
    verdicts: ['wrong', 'wrong', 'wrong'],
    truncated: [false, true, false],
    outputTokens: 900,
    finishedAt: 30,
  },
  {
    id: 'math/algebra/10/0',
    qid: 'algebra/10',
    verdicts: ['runtime_error', 'correct'],
    outputTokens: 400,
    finishedAt: 40,
    details: [
      'test 2 of 3: crashed: exit status 1\nTraceback (most recent call last):\n  File "main.py", line 3\nZeroDivisionError: division by zero',
      null,
    ],
  },
  {
    id: 'math/algebra/10/1',
    qid: 'algebra/10',
    verdicts: ['wrong'],
    outputTokens: 50,
    finishedAt: 50,
    details: ['test 1 of 3: expected "1\\n2", got "1\\n3"'],
  },
  {
    id: 'math/geometry/1/0',
    qid: 'geometry/1',
    status: 'failed',
    verdicts: ['timeout'],
    outputTokens: 20,
    finishedAt: 60,
    failureType: 'GenerationTimeout',
  },
  { id: 'train/q1/0', qid: 'q1', verdicts: ['correct'], outputTokens: 10, finishedAt: 70 },
  { id: 'train/q1/1', qid: 'q1', verdicts: ['wrong'], outputTokens: 10, finishedAt: 71 },
  { id: 'train/q1/2', qid: 'q1', verdicts: ['wrong'], outputTokens: 10, finishedAt: 72 },
  { id: 'train/q1/3', qid: 'q1', verdicts: ['correct'], outputTokens: 10, finishedAt: 73 },
  { id: 'other/algebra/3/0', qid: 'algebra/3', verdicts: ['correct'], outputTokens: 10, finishedAt: 80 },
];

export const RUNNING_ID = 'math/algebra/3/3';

export async function seedTrajectoryList(pool: pg.Pool): Promise<void> {
  for (const t of LISTED) await storeListed(pool, t);
  // A running sample: its prompt row and one judged turn, no stored row yet.
  await pool.query(`INSERT INTO trajectory_prompts (trajectory_id, prompt_ids, prompt_text) VALUES ($1, '\\x01000000', 'p')`, [RUNNING_ID]);
  await pool.query(
    `INSERT INTO turn_outputs (trajectory_id, turn, attempt, context_len, output_ids, output_logprobs, finish_reason, version_start, version_end, verdict)
     VALUES ($1, 0, 1, 1, '\\x0100000002000000', '\\x0000000000000000', 'length', 0, 0, 'wrong')`,
    [RUNNING_ID],
  );
  await ensureRun(pool, { runId: 'train', maxHeadOffpolicyness: 1, batchSize: 4, maxConcurrent: 4 });
  await pool.query(
    `INSERT INTO rollout_groups (group_id, run_id, qid, size, joined, status, admitted_version) VALUES ('train/q1', 'train', 'q1', 4, 4, 'admitted', 0)`,
  );
  for (let sample = 0; sample < 4; sample++) {
    await pool.query('INSERT INTO rollout_members (trajectory_id, group_id, sample, finished, staleness, stale) VALUES ($1, $2, $3, true, 0, $4)', [
      `train/q1/${sample}`,
      'train/q1',
      sample,
      sample === 2,
    ]);
  }
}

async function storeListed(pool: pg.Pool, t: ListedTrajectory): Promise<void> {
  const failed = t.status === 'failed';
  const successes = t.verdicts.map((v) => v === 'correct');
  const raw = successes.map((s) => (s ? 1 : -1));
  const returns = raw.map((_, i) => raw.slice(i).reduce((sum, r) => sum + r, 0));
  await pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, version_start, version_end, rewards, raw_rewards, successes,
       seq_no_eos_mask, output_tokens, failure_type, finished_at)
     VALUES ($1, $2, $3, 'seed', $4, 0, $5, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      t.id,
      t.qid,
      failed ? 'failed' : 'completed',
      t.verdicts.length,
      t.verdicts.map(() => 0),
      failed ? null : returns,
      failed ? null : raw,
      failed ? null : successes,
      failed ? null : (t.truncated ?? t.verdicts.map(() => false)),
      t.outputTokens,
      t.failureType ?? null,
      new Date(EPOCH + t.finishedAt * 1000),
    ],
  );
  if (!failed) {
    await pool.query(
      `INSERT INTO monitor_records (trajectory_id, turn, qid, version_start, version_end, success, verdict, prompt_len, answer_len)
       SELECT $1, turn - 1, $2, 0, 0, verdict = 'correct', verdict, 10, 10 FROM unnest($3::text[]) WITH ORDINALITY AS v(verdict, turn)`,
      [t.id, t.qid, t.verdicts],
    );
  }
  await pool.query(
    `INSERT INTO turn_texts (trajectory_id, turn, answer_text, extracted_answer, verdict, feedback_text, verdict_detail)
     SELECT $1, turn - 1, 'answer', 'print(1)\nprint(2)', verdict, 'feedback', ($3::text[])[turn] FROM unnest($2::text[]) WITH ORDINALITY AS v(verdict, turn)`,
    [t.id, t.verdicts, t.details ?? t.verdicts.map(() => null)],
  );
}

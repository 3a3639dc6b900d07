import type pg from 'pg';
import type { FinishReason } from '../../trajectory/turn.js';
import type { FailureClass } from '../../trajectory/failure.js';
import type { EnvironmentStepRecord } from './turn-store.js';
import { storableText } from '../storable-text.js';

/**
 * One turn of a stored, completed trajectory, as its steps first answered: what a step re-run after the trajectory
 * was stored (and its working rows dropped) must answer again. Read from the trajectory's own row, its monitor
 * record and its turn text, which are written in the one transaction that stores it.
 */
export interface StoredTurnOutcome {
  /** P_t. */
  contextLen: number;
  outputLen: number;
  /** The turn stopped without EOS (`length` or `abort`: the row keeps only this bit, the seed's seq_no_eos_mask). */
  noEos: boolean;
  versionStart: number;
  versionEnd: number;
  verdict: string;
  success: boolean;
  answerText: string;
  extracted: string | null;
  /** Tokens between this turn's output and the next turn's context end; unknown for the last turn. */
  feedbackLen?: number;
  /** The environment's step as stored (absent for turns stored before environments). */
  environmentStep?: EnvironmentStepRecord;
}

/** A trajectory's row, as the steps that ran before it was written need to see it. */
export type StoredOutcome =
  | { status: 'completed'; promptLen: number; turn?: StoredTurnOutcome }
  | { status: 'failed'; failureType: string | null; failureClass: FailureClass | null };

/** The stored outcome of a trajectory (and of one of its turns), or undefined while it has no row. */
export async function loadStoredOutcome(pool: pg.Pool, trajectoryId: string, turn = -1): Promise<StoredOutcome | undefined> {
  const {
    rows: [row],
  } = await pool.query<{
    status: 'completed' | 'failed';
    failure_type: string | null;
    failure_class: FailureClass | null;
    prompt_len: number | null;
    prompt_lens: number[] | null;
    seq_no_eos_mask: boolean[] | null;
    version_start: number | null;
    version_end: number | null;
    success: boolean | null;
    verdict: string | null;
    answer_len: number | null;
    answer_text: string | null;
    extracted_answer: string | null;
    environment_step: EnvironmentStepRecord | null;
  }>(
    `SELECT t.status, t.failure_type, t.failure_class, octet_length(t.packed_prompts) / 4 AS prompt_len, t.prompt_lens,
            t.seq_no_eos_mask, m.version_start, m.version_end, m.success, m.verdict, m.answer_len, x.answer_text, x.extracted_answer,
            x.environment_step
     FROM trajectories t
     LEFT JOIN monitor_records m ON m.trajectory_id = t.trajectory_id AND m.turn = $2
     LEFT JOIN turn_texts x ON x.trajectory_id = t.trajectory_id AND x.turn = $2
     WHERE t.trajectory_id = $1`,
    [storableText(trajectoryId), turn],
  );
  if (!row) return undefined;
  if (row.status === 'failed') return { status: 'failed', failureType: row.failure_type, failureClass: row.failure_class };
  const promptLens = row.prompt_lens ?? [];
  const outcome: StoredOutcome = { status: 'completed', promptLen: row.prompt_len ?? 0 };
  if (row.verdict === null || promptLens[turn] === undefined) return outcome;
  const next = promptLens[turn + 1];
  return {
    ...outcome,
    turn: {
      contextLen: promptLens[turn]!,
      outputLen: row.answer_len!,
      noEos: row.seq_no_eos_mask?.[turn] ?? false,
      versionStart: row.version_start!,
      versionEnd: row.version_end!,
      verdict: row.verdict,
      success: row.success!,
      answerText: row.answer_text ?? '',
      extracted: row.extracted_answer,
      ...(next === undefined ? {} : { feedbackLen: next - promptLens[turn]! - row.answer_len! }),
      ...(row.environment_step ? { environmentStep: row.environment_step } : {}),
    },
  };
}

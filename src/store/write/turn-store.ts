import type pg from 'pg';
import { decodeFloat32, decodeInt32, encodeFloat32, encodeInt32 } from '../../tokens/token-codec.js';
import type { FinishReason } from '../../trajectory/turn.js';
import { storableJson, storableText } from '../storable-text.js';
import { inTransaction } from '../transaction.js';

/** A turn's generation as the generate activity stores it. */
export interface StoredTurnOutput {
  trajectoryId: string;
  turn: number;
  attempt: number;
  contextLen: number;
  outputIds: number[];
  outputLogprobs: number[];
  outputVersions: number[];
  finishReason: FinishReason;
  versionStart: number;
  versionEnd: number;
  /** The server that generated it: the GPU worker's own task queue (turn affinity), or its backend URL. */
  servedBy?: string;
  /** Prompt tokens the server reported served from its prefix cache; undefined where it reports none. */
  cachedTokens?: number;
  /** The attempt's wait from Temporal scheduling it to a GPU worker starting it, and its generation (ms; migration 018). */
  queueMs?: number;
  generateMs?: number;
}

export class ContextMismatch extends Error {
  override readonly name: string = 'ContextMismatch';
}

/** The trajectory has no working prompt row: never tokenized, or stored (its working rows dropped). */
export class NoStoredPrompt extends ContextMismatch {
  override readonly name = 'NoStoredPrompt';
}

/**
 * Stores a trajectory's prompt ids, unless the trajectory already has its row: a tokenize step re-run after the
 * trajectory was stored (a stalled worker's, or a workflow task retried from before it) must not leave working
 * rows behind. The lock orders it with `storeCompletedTrajectory` / `storeFailedTrajectory`, so the check cannot
 * pass just before a concurrent store commits. Returns P_0, or undefined when the trajectory is stored.
 */
export async function savePrompt(pool: pg.Pool, trajectoryId: string, ids: readonly number[], text: string): Promise<number | undefined> {
  return inTransaction(pool, async (client) => {
    await lockTrajectory(client, trajectoryId);
    // A retried activity finds the row already there; the stored prompt wins so its length never changes.
    const { rows } = await client.query<{ n: number }>(
      `INSERT INTO trajectory_prompts (trajectory_id, prompt_ids, prompt_text)
       SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM trajectories WHERE trajectory_id = $1)
       ON CONFLICT (trajectory_id) DO UPDATE SET trajectory_id = EXCLUDED.trajectory_id
       RETURNING length(prompt_ids) / 4 AS n`,
      [trajectoryId, encodeInt32(ids), storableText(text)],
    );
    return rows[0]?.n;
  });
}

/**
 * Serialises the writers that create a trajectory's working rows with the ones that store its row and drop them
 * (a transaction-scoped advisory lock on the id, released at commit).
 */
export async function lockTrajectory(client: pg.PoolClient, trajectoryId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [trajectoryId]);
}

/**
 * C_t: the prompt, then every earlier turn's output and feedback, exactly as stored. A turn an agent program's next
 * call forked from (`fork_ids`, migration 019) is followed by the fork's whole context instead: it starts again there.
 */
export async function loadContext(pool: pg.Pool, trajectoryId: string, turn: number): Promise<number[]> {
  // One round trip: the prompt joined with every earlier turn (the prompt repeats per row; it is short).
  const { rows } = await pool.query<{
    prompt_ids: Buffer;
    turn: number | null;
    output_ids: Buffer | null;
    feedback_ids: Buffer | null;
    fork_ids: Buffer | null;
  }>(
    `SELECT p.prompt_ids, o.turn, o.output_ids, o.feedback_ids, o.fork_ids FROM trajectory_prompts p
     LEFT JOIN turn_outputs o ON o.trajectory_id = p.trajectory_id AND o.turn < $2
     WHERE p.trajectory_id = $1 ORDER BY o.turn`,
    [trajectoryId, turn],
  );
  if (rows.length === 0) throw new NoStoredPrompt(`trajectory ${trajectoryId} has no stored prompt`);
  const earlier = rows.filter((row) => row.turn !== null);
  if (earlier.length !== turn)
    throw new ContextMismatch(`trajectory ${trajectoryId}: turn ${turn} needs ${turn} earlier turns, found ${earlier.length}`);
  let parts = [rows[0]!.prompt_ids];
  for (const row of earlier) {
    if (row.fork_ids) parts = [row.fork_ids];
    else if (row.feedback_ids) parts.push(row.output_ids!, row.feedback_ids);
    else throw new ContextMismatch(`trajectory ${trajectoryId}: turn ${row.turn} has no feedback yet`);
  }
  return decodeInt32(Buffer.concat(parts));
}

/**
 * Stores a generation. A later attempt replaces an earlier one, never the reverse: an attempt that timed out
 * but is still running somewhere must not overwrite the output the workflow has already moved on with.
 */
export async function saveTurnOutput(pool: pg.Pool, output: StoredTurnOutput): Promise<boolean> {
  // Only while the trajectory's prompt row exists (locked FOR SHARE): an attempt that outlived its trajectory (a
  // stalled GPU worker's, after the trajectory was stored and its working rows dropped) stores nothing.
  const result = await pool.query(
    `INSERT INTO turn_outputs (trajectory_id, turn, attempt, context_len, output_ids, output_logprobs, finish_reason, version_start, version_end, output_versions,
       served_by, cached_tokens, queue_ms, generate_ms)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 FROM trajectory_prompts WHERE trajectory_id = $1 FOR SHARE
     ON CONFLICT (trajectory_id, turn) DO UPDATE SET
       attempt = EXCLUDED.attempt, context_len = EXCLUDED.context_len, output_ids = EXCLUDED.output_ids,
       output_logprobs = EXCLUDED.output_logprobs, output_versions = EXCLUDED.output_versions, finish_reason = EXCLUDED.finish_reason,
       version_start = EXCLUDED.version_start, version_end = EXCLUDED.version_end, served_by = EXCLUDED.served_by, cached_tokens = EXCLUDED.cached_tokens,
       queue_ms = EXCLUDED.queue_ms, generate_ms = EXCLUDED.generate_ms,
       answer_text = NULL, extracted_answer = NULL, verdict = NULL, feedback_ids = NULL, feedback_text = NULL, updated_at = now()
     WHERE turn_outputs.attempt < EXCLUDED.attempt`,
    [
      output.trajectoryId,
      output.turn,
      output.attempt,
      output.contextLen,
      encodeInt32(output.outputIds),
      encodeFloat32(output.outputLogprobs),
      output.finishReason,
      output.versionStart,
      output.versionEnd,
      encodeInt32(output.outputVersions),
      storableText(output.servedBy ?? null),
      output.cachedTokens ?? null,
      timingMs(output.queueMs),
      timingMs(output.generateMs),
    ],
  );
  return result.rowCount === 1;
}

/** A timing as stored: whole milliseconds, never negative (clock skew between Temporal and a worker), null when unknown. */
export function timingMs(ms: number | undefined): number | null {
  return ms === undefined || !Number.isFinite(ms) ? null : Math.min(Math.max(Math.round(ms), 0), 2 ** 31 - 1);
}

/** A turn's stored generation, as the attempt that stored it reported it (no tokens: counts and versions). */
export interface StoredGeneration {
  contextLen: number;
  outputLen: number;
  finishReason: FinishReason;
  versionStart: number;
  versionEnd: number;
}

export async function loadStoredGeneration(pool: pg.Pool, trajectoryId: string, turn: number): Promise<StoredGeneration | undefined> {
  const {
    rows: [row],
  } = await pool.query<{ context_len: number; output_len: number; finish_reason: FinishReason; version_start: number; version_end: number }>(
    `SELECT context_len, octet_length(output_ids) / 4 AS output_len, finish_reason, version_start, version_end
     FROM turn_outputs WHERE trajectory_id = $1 AND turn = $2`,
    [trajectoryId, turn],
  );
  return (
    row && {
      contextLen: row.context_len,
      outputLen: row.output_len,
      finishReason: row.finish_reason,
      versionStart: row.version_start,
      versionEnd: row.version_end,
    }
  );
}

export async function loadTurnOutputIds(pool: pg.Pool, trajectoryId: string, turn: number): Promise<number[]> {
  const { rows } = await pool.query<{ output_ids: Buffer }>('SELECT output_ids FROM turn_outputs WHERE trajectory_id = $1 AND turn = $2', [
    trajectoryId,
    turn,
  ]);
  if (rows.length === 0) throw new ContextMismatch(`trajectory ${trajectoryId} has no output for turn ${turn}`);
  return decodeInt32(rows[0]!.output_ids);
}

/**
 * A turn's environment step as kept with the turn (`environment_step`, jsonb): what the environment answered beyond
 * its verdict. Observations are the messages whose tokens follow the output (`feedback_ids`).
 */
export interface EnvironmentStepRecord {
  observations: { role: string; content: string }[];
  reward: number;
  /** The environment's own success (release 6); absent in steps kept before it, which succeeded by their verdict. */
  success?: boolean;
  done: boolean;
  info: Record<string, unknown>;
  /** What the next step starts from (JSON; absent when the environment keeps none). */
  state?: unknown;
}

/** A turn's judgement as stored with its working row: the verdict, and the feedback that follows it. */
export interface StoredJudgement {
  answerText: string;
  extracted: string | null;
  status: string;
  feedbackLen: number;
  /** Absent for a turn judged by a release before environments. */
  environmentStep?: EnvironmentStepRecord;
}

/** A turn's output, and its judgement once one is stored; undefined when the turn has no working row. */
export async function loadTurnForJudging(
  pool: pg.Pool,
  trajectoryId: string,
  turn: number,
): Promise<{ outputIds: number[]; judged?: StoredJudgement } | undefined> {
  const {
    rows: [row],
  } = await pool.query<JudgementRow & { output_ids: Buffer }>(
    'SELECT output_ids, answer_text, extracted_answer, verdict, feedback_ids, environment_step FROM turn_outputs WHERE trajectory_id = $1 AND turn = $2',
    [trajectoryId, turn],
  );
  if (!row) return undefined;
  return { outputIds: decodeInt32(row.output_ids), ...(row.verdict === null ? {} : { judged: storedJudgement(row) }) };
}

interface JudgementRow {
  answer_text: string | null;
  extracted_answer: string | null;
  verdict: string | null;
  feedback_ids: Buffer | null;
  environment_step: EnvironmentStepRecord | null;
}

function storedJudgement(row: JudgementRow): StoredJudgement {
  return {
    answerText: row.answer_text ?? '',
    extracted: row.extracted_answer,
    status: row.verdict!,
    feedbackLen: (row.feedback_ids?.length ?? 0) / 4,
    ...(row.environment_step ? { environmentStep: row.environment_step } : {}),
  };
}

export async function saveVerdict(
  pool: pg.Pool,
  trajectoryId: string,
  turn: number,
  verdict: { answerText: string; extracted: string | null; status: string },
): Promise<void> {
  await pool.query(
    'UPDATE turn_outputs SET answer_text = $3, extracted_answer = $4, verdict = $5, updated_at = now() WHERE trajectory_id = $1 AND turn = $2',
    [trajectoryId, turn, storableText(verdict.answerText), storableText(verdict.extracted), verdict.status],
  );
}

export async function saveFeedback(pool: pg.Pool, trajectoryId: string, turn: number, ids: readonly number[], text: string): Promise<void> {
  await pool.query('UPDATE turn_outputs SET feedback_ids = $3, feedback_text = $4, updated_at = now() WHERE trajectory_id = $1 AND turn = $2', [
    trajectoryId,
    turn,
    encodeInt32(ids),
    storableText(text),
  ]);
}

/**
 * A turn's verdict and the feedback that follows it, in one statement (the environment step's one write). The first
 * judgement stored wins: two runs of the same step (a stalled worker's and its replacement's) may judge differently
 * (a sandbox timeout is a race against the clock), and every run must answer with the one that is kept. Returns
 * the judgement kept, or undefined when the turn has no working row (the trajectory was stored meanwhile).
 */
export async function saveVerdictAndFeedback(
  pool: pg.Pool,
  trajectoryId: string,
  turn: number,
  verdict: { answerText: string; extracted: string | null; status: string; detail?: string },
  /** `forkIds`: an agent program's next call rewrote its history; the next turn's whole context (loadContext). */
  feedback: { ids: readonly number[]; text: string; forkIds?: readonly number[] },
  environmentStep?: EnvironmentStepRecord,
  /** The environment step's run up to this write (ms; migration 018). */
  verifyMs?: number,
): Promise<StoredJudgement | undefined> {
  const {
    rows: [saved],
  } = await pool.query<JudgementRow>(
    `UPDATE turn_outputs SET answer_text = $3, extracted_answer = $4, verdict = $5, feedback_ids = $6, feedback_text = $7, verdict_detail = $8,
       environment_step = $9, verify_ms = $10, fork_ids = $11, updated_at = now()
     WHERE trajectory_id = $1 AND turn = $2 AND verdict IS NULL
     RETURNING answer_text, extracted_answer, verdict, feedback_ids, environment_step`,
    [
      trajectoryId,
      turn,
      storableText(verdict.answerText),
      storableText(verdict.extracted),
      storableText(verdict.status),
      encodeInt32(feedback.ids),
      storableText(feedback.text),
      storableText(boundedDetail(verdict.detail)),
      environmentStep === undefined ? null : storableJson(environmentStep),
      timingMs(verifyMs),
      feedback.forkIds === undefined ? null : encodeInt32(feedback.forkIds),
    ],
  );
  if (saved) return storedJudgement(saved);
  // Judged first by another run (read in a statement of its own, so its commit is seen), or no working row.
  const {
    rows: [kept],
  } = await pool.query<JudgementRow>(
    'SELECT answer_text, extracted_answer, verdict, feedback_ids, environment_step FROM turn_outputs WHERE trajectory_id = $1 AND turn = $2',
    [trajectoryId, turn],
  );
  return kept && kept.verdict !== null ? storedJudgement(kept) : undefined;
}

/** A verdict's detail is kept to its first 4,000 characters: enough for the failing test and a traceback's end. */
export const VERDICT_DETAIL_LIMIT = 4000;

function boundedDetail(detail: string | undefined): string | null {
  if (detail === undefined) return null;
  return detail.length > VERDICT_DETAIL_LIMIT ? `${detail.slice(0, VERDICT_DETAIL_LIMIT)}…` : detail;
}

/** Everything persist needs of one trajectory's turns, in turn order. */
export interface StoredTurn {
  turn: number;
  contextLen: number;
  outputIds: number[];
  outputLogprobs: number[];
  outputVersions: number[];
  feedbackIds: number[];
  /** The next turn's whole context, when an agent program's next call rewrote its history (a fork); else undefined. */
  forkIds?: number[];
  answerText: string;
  extractedAnswer: string | null;
  verdict: string | null;
  feedbackText: string | null;
  /** Why the judge gave the verdict (a code turn: the failing test, expected against actual, the traceback). */
  verdictDetail?: string | null;
  environmentStep?: EnvironmentStepRecord | null;
  /** The server that generated the turn, and the prompt tokens it reported cached (null: unknown, unreported). */
  servedBy?: string | null;
  cachedTokens?: number | null;
  /** The turn's timings (ms; null: not timed, a turn written before migration 018). */
  queueMs?: number | null;
  generateMs?: number | null;
  verifyMs?: number | null;
}

export async function loadStoredTurns(client: pg.PoolClient | pg.Pool, trajectoryId: string): Promise<{ promptIds: number[]; turns: StoredTurn[] }> {
  const prompt = await client.query<{ prompt_ids: Buffer }>('SELECT prompt_ids FROM trajectory_prompts WHERE trajectory_id = $1', [trajectoryId]);
  const { rows } = await client.query(
    `SELECT turn, context_len, output_ids, output_logprobs, output_versions, version_start, feedback_ids, fork_ids, answer_text, extracted_answer, verdict, feedback_text,
            verdict_detail, environment_step, served_by, cached_tokens, queue_ms, generate_ms, verify_ms
     FROM turn_outputs WHERE trajectory_id = $1 ORDER BY turn`,
    [trajectoryId],
  );
  return {
    promptIds: prompt.rows[0] ? decodeInt32(prompt.rows[0].prompt_ids) : [],
    turns: rows.map((row) => ({
      turn: row.turn,
      contextLen: row.context_len,
      outputIds: decodeInt32(row.output_ids),
      outputLogprobs: decodeFloat32(row.output_logprobs),
      outputVersions: row.output_versions ? decodeInt32(row.output_versions) : new Array(row.output_ids.length / 4).fill(row.version_start),
      feedbackIds: row.feedback_ids ? decodeInt32(row.feedback_ids) : [],
      ...(row.fork_ids ? { forkIds: decodeInt32(row.fork_ids) } : {}),
      answerText: row.answer_text ?? '',
      extractedAnswer: row.extracted_answer,
      verdict: row.verdict,
      feedbackText: row.feedback_text,
      verdictDetail: row.verdict_detail,
      environmentStep: row.environment_step,
      servedBy: row.served_by,
      cachedTokens: row.cached_tokens,
      queueMs: row.queue_ms,
      generateMs: row.generate_ms,
      verifyMs: row.verify_ms,
    })),
  };
}

import type pg from 'pg';
import { decodeFloat32, decodeInt32 } from '../../tokens/token-codec.js';
import { unpackTurns, type UnpackedTurn } from '../../trajectory/unpacking.js';
import { verdictSucceeded } from '../../trajectory/turn.js';

/** One turn as the viewer shows it: tokens, texts, verdict and reward. Read-only; nothing here writes. */
export interface TurnView extends UnpackedTurn {
  turn: number;
  answerText: string | null;
  extractedAnswer: string | null;
  verdict: string | null;
  feedbackText: string | null;
  /** Why the judge gave the verdict: a code turn's failing test, expected against actual output, traceback. */
  verdictDetail: string | null;
  success: boolean | null;
  finishReason: string | null;
  versionStart: number | null;
  versionEnd: number | null;
  /** r_t as shaped, and R_t (returns-to-go); null until the trajectory is stored. */
  rawReward: number | null;
  reward: number | null;
  /**
   * The environment's observation messages after this turn, in their chat roles; null for a turn stored before
   * environments (its observation is `feedbackText`, a user message).
   */
  observations: ObservationView[] | null;
  /** The environment's reward for the turn, before the run's shaping (`rawReward` is after it); null before environments. */
  environmentReward: number | null;
  /** The environment ended the episode with this turn; null before environments. */
  done: boolean | null;
  /** The environment's free-form info; null before environments. */
  info: Record<string, unknown> | null;
  /** The state the next step starts from (JSON, possibly big); absent when the environment kept none. */
  state?: unknown;
  /** The server that generated the turn (its GPU workers' task queue, or its URL); null for turns stored before it was kept. */
  servedBy: string | null;
  /** Prompt tokens that server reported served from its prefix cache; null where it reports none. */
  cachedTokens: number | null;
  /** The turn's queue, generate and verify time in ms (TURN_LATENCY's definitions); null where not kept (before migration 018, or not yet). */
  queueMs: number | null;
  generateMs: number | null;
  verifyMs: number | null;
}

/** One observation message as stored with the turn. */
export interface ObservationView {
  role: string;
  content: string;
  /** A tool result's call (an agent program's `tool` messages); absent otherwise. */
  toolCallId?: string;
}

/** What Postgres knows of one trajectory, stored or still running. */
export interface TrajectoryView {
  trajectoryId: string;
  qid: string | null;
  /** `queued`: its group waits for admission; `running`: working rows exist; `unknown`: Postgres has nothing yet. */
  status: 'completed' | 'failed' | 'running' | 'queued' | 'unknown';
  layout: string | null;
  /** The environment the trajectory ran in; null for rows stored before environments (math, or code for a code task) and while running. */
  environment: string | null;
  birthTime: number | null;
  finishedAt: Date | null;
  endReason: string | null;
  error: string | null;
  failureType: string | null;
  failureClass: string | null;
  groupId: string | null;
  /** Set at hand-out to a consumer: policy version at hand-out minus the oldest token's version. */
  staleness: number | null;
  promptIds: number[];
  promptText: string | null;
  turns: TurnView[];
  /** The turn being generated now, from its checkpoint (running trajectories only). */
  generating: { turn: number; attempt: number; ids: number[]; versions: number[]; updatedAt: Date } | null;
}

/** Loads a trajectory from the stored row, or from the working rows while it runs. */
export async function loadTrajectoryView(pool: pg.Pool, trajectoryId: string): Promise<TrajectoryView> {
  const [stored, membership] = await Promise.all([
    pool.query('SELECT * FROM trajectories WHERE trajectory_id = $1', [trajectoryId]),
    pool.query<{ group_id: string; staleness: number | null; status: string; qid: string }>(
      'SELECT m.group_id, m.staleness, g.status, g.qid FROM rollout_members m JOIN rollout_groups g USING (group_id) WHERE m.trajectory_id = $1',
      [trajectoryId],
    ),
  ]);
  const member = membership.rows[0];
  const base: TrajectoryView = {
    trajectoryId,
    qid: member?.qid ?? null,
    status: 'unknown',
    layout: null,
    environment: null,
    birthTime: null,
    finishedAt: null,
    endReason: null,
    error: null,
    failureType: null,
    failureClass: null,
    groupId: member?.group_id ?? null,
    staleness: member?.staleness ?? null,
    promptIds: [],
    promptText: null,
    turns: [],
    generating: null,
  };
  const row = stored.rows[0];
  if (row) return { ...base, ...(await storedTrajectory(pool, row)) };
  const running = await runningTrajectory(pool, trajectoryId);
  if (running) return { ...base, ...running };
  return { ...base, status: member?.status === 'pending' ? 'queued' : 'unknown' };
}

async function storedTrajectory(pool: pg.Pool, row: Record<string, any>): Promise<Partial<TrajectoryView>> {
  const [monitor, texts] = await Promise.all([
    pool.query(
      `SELECT turn, version_start, version_end, success, verdict, answer_len, served_by, cached_tokens, queue_ms, generate_ms, verify_ms
       FROM monitor_records WHERE trajectory_id = $1 ORDER BY turn`,
      [row.trajectory_id],
    ),
    pool.query(
      'SELECT turn, answer_text, extracted_answer, verdict, feedback_text, verdict_detail, environment_step FROM turn_texts WHERE trajectory_id = $1 ORDER BY turn',
      [row.trajectory_id],
    ),
  ]);
  const textOf = new Map(texts.rows.map((text) => [text.turn as number, text]));
  const unpacked = row.packed_input_ids
    ? unpackTurns({
        layout: row.layout,
        packedInputIds: decodeInt32(row.packed_input_ids),
        packedLogprobs: decodeFloat32(row.packed_logprobs),
        tokenVersions: row.token_versions ? decodeInt32(row.token_versions) : [],
        seqlens: row.seqlens ?? [],
        promptLens: row.prompt_lens ?? [],
        outputLens: monitor.rows.map((m) => m.answer_len as number),
      })
    : [];
  const turnCount = Math.max(unpacked.length, texts.rows.length);
  const turns = Array.from({ length: turnCount }, (_, t): TurnView => {
    const text = textOf.get(t);
    const record = monitor.rows[t];
    return {
      turn: t,
      ...(unpacked[t] ?? { contextLen: 0, outputIds: [], outputLogprobs: [], outputVersions: [], feedbackIds: [] }),
      answerText: text?.answer_text ?? null,
      extractedAnswer: text?.extracted_answer ?? null,
      verdict: record?.verdict ?? text?.verdict ?? null,
      feedbackText: text?.feedback_text ?? null,
      verdictDetail: text?.verdict_detail ?? null,
      success: record?.success ?? null,
      finishReason: row.seq_no_eos_mask?.[t] === undefined ? null : row.seq_no_eos_mask[t] ? 'length' : 'stop',
      versionStart: record?.version_start ?? null,
      versionEnd: record?.version_end ?? null,
      rawReward: row.raw_rewards?.[t] ?? null,
      reward: row.rewards?.[t] ?? null,
      ...environmentStepView(text?.environment_step),
      servedBy: record?.served_by ?? null,
      cachedTokens: record?.cached_tokens ?? null,
      queueMs: record?.queue_ms ?? null,
      generateMs: record?.generate_ms ?? null,
      verifyMs: record?.verify_ms ?? null,
    };
  });
  return {
    qid: row.qid,
    status: row.status,
    layout: row.layout,
    environment: row.environment ?? null,
    birthTime: Number(row.birth_time),
    finishedAt: row.finished_at,
    endReason: row.end_reason,
    error: row.error,
    failureType: row.failure_type,
    failureClass: row.failure_class,
    promptIds: row.packed_prompts ? decodeInt32(row.packed_prompts) : [],
    turns,
  };
}

async function runningTrajectory(pool: pg.Pool, trajectoryId: string): Promise<Partial<TrajectoryView> | undefined> {
  const [prompt, outputs, checkpoint] = await Promise.all([
    pool.query('SELECT prompt_ids, prompt_text, created_at FROM trajectory_prompts WHERE trajectory_id = $1', [trajectoryId]),
    pool.query('SELECT * FROM turn_outputs WHERE trajectory_id = $1 ORDER BY turn', [trajectoryId]),
    pool.query(
      `SELECT c.turn, c.attempt, c.updated_at, array_agg(p.ids ORDER BY p.first_token) AS ids, array_agg(p.versions ORDER BY p.first_token) AS versions
       FROM turn_checkpoints c LEFT JOIN turn_checkpoint_pieces p USING (trajectory_id, turn)
       WHERE c.trajectory_id = $1 GROUP BY c.turn, c.attempt, c.updated_at ORDER BY c.turn DESC LIMIT 1`,
      [trajectoryId],
    ),
  ]);
  if (prompt.rows.length === 0) return undefined;
  const turns = outputs.rows.map((o): TurnView => ({
    turn: o.turn,
    contextLen: o.context_len,
    outputIds: decodeInt32(o.output_ids),
    outputLogprobs: decodeFloat32(o.output_logprobs),
    outputVersions: o.output_versions ? decodeInt32(o.output_versions) : [],
    feedbackIds: o.feedback_ids ? decodeInt32(o.feedback_ids) : [],
    answerText: o.answer_text,
    extractedAnswer: o.extracted_answer,
    verdict: o.verdict,
    feedbackText: o.feedback_text,
    verdictDetail: o.verdict_detail ?? null,
    success: o.verdict === null ? null : (o.environment_step?.success ?? verdictSucceeded(o.verdict)),
    finishReason: o.finish_reason,
    versionStart: o.version_start,
    versionEnd: o.version_end,
    rawReward: null,
    reward: null,
    ...environmentStepView(o.environment_step),
    servedBy: o.served_by ?? null,
    cachedTokens: o.cached_tokens ?? null,
    queueMs: o.queue_ms ?? null,
    generateMs: o.generate_ms ?? null,
    verifyMs: o.verify_ms ?? null,
  }));
  const piece = checkpoint.rows[0];
  const generating =
    piece && !turns.some((t) => t.turn === piece.turn)
      ? {
          turn: piece.turn,
          attempt: piece.attempt,
          updatedAt: piece.updated_at,
          ids: decodeInt32(Buffer.concat((piece.ids as (Buffer | null)[]).filter((b): b is Buffer => b !== null))),
          versions: decodeInt32(Buffer.concat((piece.versions as (Buffer | null)[]).filter((b): b is Buffer => b !== null))),
        }
      : null;
  return {
    status: 'running',
    promptIds: decodeInt32(prompt.rows[0].prompt_ids),
    promptText: prompt.rows[0].prompt_text,
    birthTime: prompt.rows[0].created_at.getTime(),
    turns,
    generating,
  };
}

type EnvironmentStepView = Pick<TurnView, 'observations' | 'environmentReward' | 'done' | 'info' | 'state'>;

/**
 * A turn's `environment_step` (jsonb) as the viewer shows it. Read defensively: the column is written by workers of
 * any release, and a field of the wrong shape is shown as missing rather than failing the page.
 */
export function environmentStepView(step: unknown): EnvironmentStepView {
  if (step === null || typeof step !== 'object' || Array.isArray(step))
    return { observations: null, environmentReward: null, done: null, info: null };
  const record = step as Record<string, unknown>;
  const observations = Array.isArray(record.observations)
    ? record.observations
        .filter((m): m is Record<string, unknown> => m !== null && typeof m === 'object')
        .map((m) => ({
          role: typeof m.role === 'string' ? m.role : String(m.role ?? '?'),
          content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''),
          ...(typeof m.tool_call_id === 'string' ? { toolCallId: m.tool_call_id } : {}),
        }))
    : [];
  const info = record.info !== null && typeof record.info === 'object' && !Array.isArray(record.info) ? (record.info as Record<string, unknown>) : {};
  return {
    observations,
    environmentReward: typeof record.reward === 'number' ? record.reward : null,
    done: typeof record.done === 'boolean' ? record.done : null,
    info,
    ...(record.state === undefined || record.state === null ? {} : { state: record.state }),
  };
}

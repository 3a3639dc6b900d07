import type pg from 'pg';
import { decodeFloat32, decodeInt32 } from '../../tokens/token-codec.js';
import type { FailureClass } from '../../trajectory/failure.js';

/** One exported trajectory: the seed's keys and layout, plus per-turn lengths, successes and raw rewards. */
export interface ExportedTrajectory {
  trajectory_id: string;
  qid: string;
  task_id: number | null;
  status: 'completed' | 'failed';
  error?: string;
  /** Failed trajectories only: why, as a type a trainer can branch on (src/trajectory/failure.ts). */
  failure_type?: string;
  /** Failed trajectories only: `infrastructure` (a rerun may succeed) or `data` (this request cannot). */
  failure_class?: FailureClass;
  layout: string;
  /** The environment the trajectory ran in (`math`, `code`, a user's); null for rows stored before environments (math, or code for a code task). */
  environment: string | null;
  packed_input_ids: number[];
  packed_logprobs: number[];
  prompt_mask: boolean[];
  seq_no_eos_mask: boolean[];
  packed_prompts: number[];
  version_start: number[];
  version_end: number[];
  rewards: number[];
  birth_time: number;
  seqlens: number[];
  prompt_lens: number[];
  successes: boolean[];
  raw_rewards: number[];
  /** One per entry of packed_input_ids: the policy version of a generated token, −1 for prompt and feedback. */
  token_versions: number[];
  /** `turns`, `done` (the environment ended the episode), `early_stop` or `context_exhausted` (null for failed trajectories). */
  end_reason: string | null;
  /**
   * The sampling every output token was drawn with; packed_logprobs are of that distribution (docs/behaviour-logprobs.md).
   * Null for failed trajectories and for those stored by releases that left all but the temperature to the server.
   */
  temperature: number | null;
  top_p: number | null;
  /** -1: off (every token). */
  top_k: number | null;
  min_p: number | null;
  repetition_penalty: number | null;
  /** Set in a consumed batch only: the group (the samples of one prompt) this trajectory belongs to. */
  group_id?: string;
  /** Set in a consumed batch only: policy version at hand-out minus the oldest token's version. */
  staleness?: number;
  /** Set in a consumed batch only: staleness above the run's max_head_offpolicyness (η). Kept, and counted. */
  stale?: boolean;
}

const PAGE = 100;

/** Streams stored trajectories oldest birth_time first, a page at a time so memory stays flat. */
export async function* readTrajectories(pool: pg.Pool, options: { includeFailed?: boolean } = {}): AsyncGenerator<ExportedTrajectory> {
  let after: [number, string] = [-1, ''];
  for (;;) {
    const { rows } = await pool.query(
      `SELECT * FROM trajectories WHERE (birth_time, trajectory_id) > ($1, $2) AND ($3 OR status = 'completed')
       ORDER BY birth_time, trajectory_id LIMIT ${PAGE}`,
      [after[0], after[1], options.includeFailed ?? false],
    );
    for (const row of rows) yield toExported(row);
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1];
    after = [Number(last.birth_time), last.trajectory_id];
  }
}

/** The stored trajectories with these ids, in the order given (ids not stored are left out). */
export async function readTrajectoriesById(pool: pg.Pool, ids: readonly string[]): Promise<ExportedTrajectory[]> {
  const { rows } = await pool.query('SELECT * FROM trajectories WHERE trajectory_id = ANY($1)', [ids]);
  const byId = new Map(rows.map((row) => [row.trajectory_id as string, toExported(row)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

function toExported(row: Record<string, any>): ExportedTrajectory {
  const bytes = (value: Buffer | null) => (value ? [...value].map((b) => b === 1) : []);
  return {
    trajectory_id: row.trajectory_id,
    qid: row.qid,
    task_id: row.task_id === null ? null : Number(row.task_id),
    status: row.status,
    ...(row.error ? { error: row.error } : {}),
    ...(row.failure_type ? { failure_type: row.failure_type } : {}),
    ...(row.failure_class ? { failure_class: row.failure_class } : {}),
    layout: row.layout,
    environment: row.environment ?? null,
    packed_input_ids: row.packed_input_ids ? decodeInt32(row.packed_input_ids) : [],
    packed_logprobs: row.packed_logprobs ? decodeFloat32(row.packed_logprobs) : [],
    prompt_mask: bytes(row.prompt_mask),
    seq_no_eos_mask: row.seq_no_eos_mask ?? [],
    packed_prompts: row.packed_prompts ? decodeInt32(row.packed_prompts) : [],
    version_start: row.version_start ?? [],
    version_end: row.version_end ?? [],
    rewards: row.rewards ?? [],
    birth_time: Number(row.birth_time),
    seqlens: row.seqlens ?? [],
    prompt_lens: row.prompt_lens ?? [],
    successes: row.successes ?? [],
    raw_rewards: row.raw_rewards ?? [],
    token_versions: row.token_versions ? decodeInt32(row.token_versions) : [],
    end_reason: row.end_reason ?? null,
    temperature: row.temperature ?? null,
    top_p: row.top_p ?? null,
    top_k: row.top_k ?? null,
    min_p: row.min_p ?? null,
    repetition_penalty: row.repetition_penalty ?? null,
  };
}

export interface MonitorRecord {
  trajectory_id: string;
  qid: string;
  turn: number;
  version_start: number;
  version_end: number;
  success: boolean;
  verdict: string;
  prompt_len: number;
  answer_len: number;
}

export async function* readMonitorRecords(pool: pg.Pool): AsyncGenerator<MonitorRecord> {
  let after: [string, number] = ['', -1];
  for (;;) {
    const { rows } = await pool.query<MonitorRecord>(
      `SELECT trajectory_id, qid, turn, version_start, version_end, success, verdict, prompt_len, answer_len
       FROM monitor_records WHERE (trajectory_id, turn) > ($1, $2) ORDER BY trajectory_id, turn LIMIT ${PAGE * 5}`,
      after,
    );
    yield* rows;
    if (rows.length < PAGE * 5) return;
    const last = rows[rows.length - 1]!;
    after = [last.trajectory_id, last.turn];
  }
}

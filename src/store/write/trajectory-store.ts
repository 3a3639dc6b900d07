import type pg from 'pg';
import { encodeFloat32, encodeInt32 } from '../../tokens/token-codec.js';
import type { PackedTokens } from '../../trajectory/packing.js';
import type { SamplingParameters } from '../../trajectory/sampling.js';
import type { EndReason, TurnRecord } from '../../trajectory/turn.js';
import type { TrajectoryFailure } from '../../trajectory/failure.js';
import type { GroupMembership } from '../../admission/group-membership.js';
import type { TrajectoryIdentity } from '../../trajectory/identity.js';
import { inTransaction } from '../transaction.js';
import { lockTrajectory, type StoredTurn } from './turn-store.js';
import { storableJson, storableText } from '../storable-text.js';
import { joinGroupAsFailed, recordMemberFinished } from './rollout-groups.js';

export interface CompletedTrajectory extends TrajectoryIdentity {
  endReason: EndReason;
  promptIds: number[];
  packed: PackedTokens;
  turns: TurnRecord[];
  rewards: number[];
  rawRewards: number[];
  texts: StoredTurn[];
  /** Undefined for a trajectory whose workflow did not say (an earlier release's): its columns stay NULL. */
  sampling?: SamplingParameters;
}

/**
 * Writes a finished trajectory, its monitor records and turn texts in one transaction, and drops its working
 * rows. Idempotent by trajectory id: a second call (a retried activity, a duplicate workflow) changes nothing.
 * Returns false when the trajectory was already stored.
 */
export async function storeCompletedTrajectory(pool: pg.Pool, trajectory: CompletedTrajectory): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    await lockTrajectory(client, trajectory.trajectoryId);
    const { packed, turns } = trajectory;
    const inserted = await client.query(
      `INSERT INTO trajectories (trajectory_id, qid, task_id, status, layout, num_turns, birth_time, packed_input_ids,
         packed_logprobs, prompt_mask, packed_prompts, seq_no_eos_mask, seqlens, prompt_lens, version_start, version_end,
         rewards, raw_rewards, successes, output_tokens, token_versions, end_reason, temperature, top_p, top_k, min_p, repetition_penalty, environment)
       VALUES ($1, $2, $3, 'completed', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)
       ON CONFLICT (trajectory_id) DO NOTHING`,
      [
        trajectory.trajectoryId,
        storableText(trajectory.qid),
        trajectory.taskId ?? null,
        trajectory.layout,
        turns.length,
        trajectory.birthTime,
        encodeInt32(packed.packedInputIds),
        encodeFloat32(packed.packedLogprobs),
        Buffer.from(packed.promptMask),
        encodeInt32(trajectory.promptIds),
        packed.seqNoEosMask,
        packed.seqlens,
        packed.promptLens,
        turns.map((t) => t.versionStart),
        turns.map((t) => t.versionEnd),
        trajectory.rewards,
        trajectory.rawRewards,
        turns.map((t) => t.success),
        turns.reduce((sum, t) => sum + t.outputLen, 0),
        encodeInt32(packed.tokenVersions),
        trajectory.endReason,
        ...samplingColumns(trajectory.sampling),
        storableText(trajectory.environment ?? null),
      ],
    );
    if (inserted.rowCount === 0) return false;
    // One statement for all turns: a round trip per turn was most of this transaction's time (and the trigger that
    // counts turns on their previous server sees each turn beside the one before: src/store/schema/turn-servers-sql.ts).
    const generatedBy = new Map(trajectory.texts.map((text) => [text.turn, text]));
    await client.query(
      `INSERT INTO monitor_records (trajectory_id, turn, qid, version_start, version_end, success, verdict, prompt_len, answer_len, served_by, cached_tokens,
         queue_ms, generate_ms, verify_ms)
       SELECT $1, turn, $2, version_start, version_end, success, verdict, prompt_len, answer_len, served_by, cached_tokens, queue_ms, generate_ms, verify_ms
       FROM unnest($3::int[], $4::int[], $5::int[], $6::boolean[], $7::text[], $8::int[], $9::int[], $10::text[], $11::int[], $12::int[], $13::int[], $14::int[])
         AS t(turn, version_start, version_end, success, verdict, prompt_len, answer_len, served_by, cached_tokens, queue_ms, generate_ms, verify_ms)`,
      [
        trajectory.trajectoryId,
        storableText(trajectory.qid),
        turns.map((t) => t.turn),
        turns.map((t) => t.versionStart),
        turns.map((t) => t.versionEnd),
        turns.map((t) => t.success),
        turns.map((t) => t.verdict),
        turns.map((t) => t.contextLen),
        turns.map((t) => t.outputLen),
        turns.map((t) => storableText(generatedBy.get(t.turn)?.servedBy ?? null)),
        turns.map((t) => generatedBy.get(t.turn)?.cachedTokens ?? null),
        turns.map((t) => generatedBy.get(t.turn)?.queueMs ?? null),
        turns.map((t) => generatedBy.get(t.turn)?.generateMs ?? null),
        turns.map((t) => generatedBy.get(t.turn)?.verifyMs ?? null),
      ],
    );
    await insertTurnTexts(client, trajectory.trajectoryId, trajectory.texts);
    await dropWorkingRows(client, trajectory.trajectoryId);
    await recordMemberFinished(client, trajectory.trajectoryId, true, trajectory.birthTime);
    return true;
  });
}

/** How a trajectory ended without finishing: the turns it completed, and why. */
export interface FailedTrajectory extends TrajectoryFailure {
  turnsDone: number;
}

/**
 * Records a trajectory that could not finish: a failure is stored as a failure, never as a zero reward.
 * Nothing the trajectory carries may make this row unstorable, so every text is made storable first.
 */
export async function storeFailedTrajectory(
  pool: pg.Pool,
  identity: TrajectoryIdentity,
  failure: FailedTrajectory,
  texts: StoredTurn[],
  unjoinedGroup?: GroupMembership,
): Promise<boolean> {
  const trajectoryId = storableText(identity.trajectoryId);
  return inTransaction(pool, async (client) => {
    await lockTrajectory(client, trajectoryId);
    const inserted = await client.query(
      `INSERT INTO trajectories (trajectory_id, qid, task_id, status, error, failure_type, failure_class, layout, num_turns, birth_time, environment)
       VALUES ($1, $2, $3, 'failed', $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (trajectory_id) DO NOTHING`,
      [
        trajectoryId,
        storableText(identity.qid),
        identity.taskId ?? null,
        storableText(failure.message),
        storableText(failure.failureType),
        failure.failureClass,
        storableText(identity.layout),
        failure.turnsDone,
        identity.birthTime,
        storableText(identity.environment ?? null),
      ],
    );
    if (inserted.rowCount === 0) return false;
    await insertTurnTexts(
      client,
      trajectoryId,
      texts.filter((text) => text.verdict !== null),
    );
    await dropWorkingRows(client, trajectoryId);
    // A member that failed before joining (an invalid request) still takes its place, so its group can fill.
    if (unjoinedGroup) await joinGroupAsFailed(client, trajectoryId, storableText(identity.qid), unjoinedGroup);
    await recordMemberFinished(client, trajectoryId, false, identity.birthTime);
    return true;
  });
}

/** Of these trajectory ids, those with no stored row yet (completed or failed). */
export async function trajectoriesWithoutRow(pool: pg.Pool, trajectoryIds: readonly string[]): Promise<string[]> {
  if (trajectoryIds.length === 0) return [];
  // Looked up as stored (an id Postgres cannot hold is stored made storable), answered as given.
  const { rows } = await pool.query<{ i: string }>(
    'SELECT i FROM unnest($1::text[]) WITH ORDINALITY AS u(id, i) WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.trajectory_id = u.id)',
    [trajectoryIds.map(storableText)],
  );
  return rows.map((row) => trajectoryIds[Number(row.i) - 1]!);
}

/** temperature, top_p, top_k, min_p, repetition_penalty: all NULL when the sampling is unknown. */
function samplingColumns(sampling: SamplingParameters | undefined): (number | null)[] {
  if (!sampling) return [null, null, null, null, null];
  return [sampling.temperature, sampling.topP, sampling.topK, sampling.minP, sampling.repetitionPenalty];
}

async function insertTurnTexts(client: pg.PoolClient, trajectoryId: string, texts: StoredTurn[]): Promise<void> {
  if (texts.length === 0) return;
  await client.query(
    `INSERT INTO turn_texts (trajectory_id, turn, answer_text, extracted_answer, verdict, feedback_text, verdict_detail, environment_step)
     SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[])`,
    [
      trajectoryId,
      texts.map((t) => t.turn),
      texts.map((t) => storableText(t.answerText)),
      texts.map((t) => storableText(t.extractedAnswer)),
      texts.map((t) => storableText(t.verdict ?? 'unverified')),
      texts.map((t) => storableText(t.feedbackText)),
      texts.map((t) => storableText(t.verdictDetail ?? null)),
      texts.map((t) => (t.environmentStep ? storableJson(t.environmentStep) : null)),
    ],
  );
}

/**
 * The prompt row goes first, in a statement of its own: its row lock waits for any writer that holds it FOR SHARE
 * (a turn output or checkpoint being written), and the next statement's snapshot then sees that write and drops
 * it too; a writer that comes later finds no prompt row and writes nothing.
 */
async function dropWorkingRows(client: pg.PoolClient, trajectoryId: string): Promise<void> {
  await client.query('DELETE FROM trajectory_prompts WHERE trajectory_id = $1', [trajectoryId]);
  await client.query(
    `WITH outputs AS (DELETE FROM turn_outputs WHERE trajectory_id = $1), requests AS (DELETE FROM agent_requests WHERE trajectory_id = $1)
     DELETE FROM turn_checkpoints WHERE trajectory_id = $1`,
    [trajectoryId],
  );
}

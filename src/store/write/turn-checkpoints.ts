import type pg from 'pg';
import type { PartialOutput } from '../../policy/resumable-generation.js';
import { decodeFloat32, decodeInt32, encodeFloat32, encodeInt32 } from '../../tokens/token-codec.js';
import { inTransaction } from '../transaction.js';

/** One attempt of one turn's generation: the attempt owns the checkpoint until a newer one claims it. */
export interface TurnCheckpointKey {
  trajectoryId: string;
  turn: number;
  attempt: number;
}

/**
 * A newer attempt of the same turn holds the checkpoint (or the turn is over, or the whole trajectory is stored:
 * a checkpoint is created only while the trajectory's prompt row exists): this attempt must stop.
 */
export class CheckpointSuperseded extends Error {
  override readonly name = 'CheckpointSuperseded';
  constructor(readonly key: TurnCheckpointKey) {
    super(
      `trajectory ${key.trajectoryId} turn ${key.turn}: attempt ${key.attempt} no longer owns the generation checkpoint (a newer attempt claimed it, or the turn was stored)`,
    );
  }
}

/**
 * Makes `key.attempt` the owner of the turn's checkpoint and returns the tokens stored in it, so this attempt
 * resumes where the last one committed; from here an older attempt still running can no longer append.
 * `carried` is what an earlier release's heartbeat held (it stored no checkpoint): kept when it is longer.
 */
export async function claimTurnCheckpoint(
  pool: pg.Pool,
  key: TurnCheckpointKey,
  carried: PartialOutput = { ids: [], logprobs: [], versions: [] },
): Promise<PartialOutput> {
  return inTransaction(pool, async (client) => {
    const claimed = await client.query<{ token_count: number }>(
      `INSERT INTO turn_checkpoints (trajectory_id, turn, attempt, token_count)
       SELECT $1, $2, $3, 0 FROM trajectory_prompts WHERE trajectory_id = $1 FOR SHARE
       ON CONFLICT (trajectory_id, turn) DO UPDATE SET attempt = EXCLUDED.attempt, updated_at = now()
       WHERE turn_checkpoints.attempt <= EXCLUDED.attempt
       RETURNING token_count`,
      [key.trajectoryId, key.turn, key.attempt],
    );
    if (claimed.rowCount === 0) throw new CheckpointSuperseded(key);
    if (carried.ids.length > claimed.rows[0]!.token_count) {
      await client.query('DELETE FROM turn_checkpoint_pieces WHERE trajectory_id = $1 AND turn = $2', [key.trajectoryId, key.turn]);
      await client.query('UPDATE turn_checkpoints SET token_count = 0 WHERE trajectory_id = $1 AND turn = $2', [key.trajectoryId, key.turn]);
      if (!(await appendTurnCheckpoint(client, key, 0, carried))) throw new CheckpointSuperseded(key);
      return carried;
    }
    const { rows } = await client.query<{ ids: Buffer; logprobs: Buffer; versions: Buffer }>(
      'SELECT ids, logprobs, versions FROM turn_checkpoint_pieces WHERE trajectory_id = $1 AND turn = $2 ORDER BY first_token',
      [key.trajectoryId, key.turn],
    );
    return {
      ids: decodeInt32(Buffer.concat(rows.map((row) => row.ids))),
      logprobs: decodeFloat32(Buffer.concat(rows.map((row) => row.logprobs))),
      versions: decodeInt32(Buffer.concat(rows.map((row) => row.versions))),
    };
  });
}

// Each append is its own row: appending to one bytea would rewrite the whole TOASTed value every time,
// O(n²) bytes written over a long turn. The head row's guarded update and the piece insert are one statement.
const APPEND = `
  WITH head AS (
    UPDATE turn_checkpoints SET token_count = token_count + $5, updated_at = now()
    WHERE trajectory_id = $1 AND turn = $2 AND attempt = $3 AND token_count = $4
    RETURNING trajectory_id, turn
  )
  INSERT INTO turn_checkpoint_pieces (trajectory_id, turn, first_token, ids, logprobs, versions)
  SELECT trajectory_id, turn, $4::int, $6::bytea, $7::bytea, $8::bytea FROM head`;

const CREATE_OR_APPEND_FIRST = `
  WITH head AS (
    INSERT INTO turn_checkpoints (trajectory_id, turn, attempt, token_count)
    SELECT $1, $2, $3, $5 FROM trajectory_prompts WHERE trajectory_id = $1 FOR SHARE
    ON CONFLICT (trajectory_id, turn) DO UPDATE SET token_count = EXCLUDED.token_count, updated_at = now()
    WHERE turn_checkpoints.attempt = EXCLUDED.attempt AND turn_checkpoints.token_count = $4
    RETURNING trajectory_id, turn
  )
  INSERT INTO turn_checkpoint_pieces (trajectory_id, turn, first_token, ids, logprobs, versions)
  SELECT trajectory_id, turn, $4::int, $6::bytea, $7::bytea, $8::bytea FROM head`;

/**
 * Appends the tokens generated after the first `from`. Applies only while `key.attempt` owns the checkpoint
 * and it holds exactly `from` tokens, so a stale attempt or a repeated append changes nothing: false then.
 * An attempt that never claimed (the first) creates the checkpoint with its first append.
 */
export async function appendTurnCheckpoint(
  db: pg.Pool | pg.PoolClient,
  key: TurnCheckpointKey,
  from: number,
  tokens: PartialOutput,
): Promise<boolean> {
  if (tokens.ids.length === 0) return true;
  const result = await db.query(from === 0 ? CREATE_OR_APPEND_FIRST : APPEND, [
    key.trajectoryId,
    key.turn,
    key.attempt,
    from,
    tokens.ids.length,
    encodeInt32(tokens.ids),
    encodeFloat32(tokens.logprobs),
    encodeInt32(tokens.versions),
  ]);
  return result.rowCount === 1;
}

/** Removes the checkpoint once the turn's output is stored, unless a newer attempt owns it by now. */
export async function dropTurnCheckpoint(pool: pg.Pool, key: TurnCheckpointKey): Promise<void> {
  await pool.query('DELETE FROM turn_checkpoints WHERE trajectory_id = $1 AND turn = $2 AND attempt <= $3', [
    key.trajectoryId,
    key.turn,
    key.attempt,
  ]);
}

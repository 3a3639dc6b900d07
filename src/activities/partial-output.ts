import type { PartialOutput } from '../policy/resumable-generation.js';
import { decodePartialOutput } from './releases/token-heartbeats.js';

/**
 * Heartbeat details of a generating turn. This release checkpoints the tokens to Postgres and heartbeats a
 * cursor, a few dozen bytes whatever the turn's length. Release 1 heartbeated the tokens themselves
 * (src/activities/releases/token-heartbeats.ts), which a retry after a deploy must still resume from.
 */
export interface CheckpointCursor {
  /** The attempt that owns the checkpoint row. */
  attempt: number;
  /** Tokens committed to the checkpoint when this heartbeat was sent. */
  tokens: number;
}

export function checkpointHeartbeat(cursor: CheckpointCursor): { checkpoint: CheckpointCursor } {
  return { checkpoint: { attempt: cursor.attempt, tokens: cursor.tokens } };
}

/** What an earlier attempt's last heartbeat says: a cursor into its checkpoint, or (earlier releases) the tokens. */
export function readHeartbeat(details: unknown): { cursor?: CheckpointCursor; carried: PartialOutput } {
  const cursor = (details as { checkpoint?: Partial<CheckpointCursor> } | undefined)?.checkpoint;
  if (cursor && Number.isInteger(cursor.attempt) && Number.isInteger(cursor.tokens)) {
    return { cursor: { attempt: cursor.attempt!, tokens: cursor.tokens! }, carried: { ids: [], logprobs: [], versions: [] } };
  }
  return { carried: decodePartialOutput(details) };
}

import type pg from 'pg';
import type { ChatCompletionRequest } from '../../agent/chat-completion-request.js';
import { storableJson } from '../storable-text.js';

/**
 * Keeps an agent program's request by its hash (migration 019), before the workflow is asked for the call: the
 * workflow's history carries the hash only. The same request stored twice (a re-run program's replayed call, a client's
 * retry) is one row.
 */
export async function saveAgentRequest(pool: pg.Pool, trajectoryId: string, requestHash: string, request: ChatCompletionRequest): Promise<void> {
  await pool.query(
    `INSERT INTO agent_requests (trajectory_id, request_hash, request) VALUES ($1, $2, $3) ON CONFLICT (trajectory_id, request_hash) DO NOTHING`,
    [trajectoryId, requestHash, storableJson(request)],
  );
}

/** A stored request of the trajectory's agent, or undefined when none has that hash (or the trajectory was stored). */
export async function loadAgentRequest(pool: pg.Pool, trajectoryId: string, requestHash: string): Promise<ChatCompletionRequest | undefined> {
  const { rows } = await pool.query<{ request: ChatCompletionRequest }>(
    'SELECT request FROM agent_requests WHERE trajectory_id = $1 AND request_hash = $2',
    [trajectoryId, requestHash],
  );
  return rows[0]?.request;
}

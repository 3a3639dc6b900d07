/**
 * Migration 019: agent programs' model calls (issue 37).
 *
 * - agent_requests: each chat completions request an agent program made, by the SHA-256 of its messages and tools by
 *   meaning (src/agent/request-hash.ts), written by the endpoint before it asks the workflow for the call. The
 *   workflow's history carries only the hash: a call repeats the whole conversation, so histories would grow with the
 *   square of its length. `json`, not `jsonb`: the prompt is rendered from it, and jsonb reorders object keys (the
 *   tools' schemas would reach the chat template in another order than the program sent). A working row: dropped
 *   with the trajectory's other working rows when it is stored.
 * - turn_outputs.fork_ids: the next turn's whole context, when the program's next call rewrote its history (a fork,
 *   src/agent/fork-reason.ts). NULL: the next turn's context is this turn's, its output and its feedback_ids.
 *
 * Shipped: never edit, add a migration.
 */
export const AGENT_CALLS_SQL = `
  CREATE TABLE agent_requests (
    trajectory_id text NOT NULL,
    request_hash text NOT NULL,
    request json NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (trajectory_id, request_hash)
  );
  ALTER TABLE turn_outputs ADD COLUMN fork_ids bytea;
`;

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { expectTokenVersions } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';

const TURN_TOKENS = 200_000;
const HEARTBEAT_MS = 250;

let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  // Answers of at least ~250K tokens (reasoning varies ±50%) in a 256K window, streamed at 50K tokens/s:
  // the turn is cut off at 200K new tokens after ~4 s, long enough for a dozen checkpoints.
  stack = await startTestStack({
    reasoningTokens: 500_000,
    contextWindow: 262_144,
    tokensPerSecond: 50_000,
    chunkTokens: 512,
    incrementalStreamingOutput: true,
    seed: 9,
  });
  stopWorkers = await stack.startWorkers({ heartbeatIntervalMs: HEARTBEAT_MS });
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

/** Heartbeat details of the pending generate activity, as Temporal holds them: encoded size and decoded value. */
async function pendingHeartbeat(
  handle: Awaited<ReturnType<typeof submitTrajectory>>['handle'],
): Promise<{ bytes: number; details: unknown } | undefined> {
  const { raw } = await handle.describe();
  const payloads = raw.pendingActivities?.find((activity) => activity.activityType?.name === 'generate')?.heartbeatDetails;
  if (!payloads?.payloads?.length) return undefined;
  return {
    bytes: temporal.api.common.v1.Payloads.encode(payloads).finish().length,
    details: defaultPayloadConverter.fromPayload(payloads.payloads[0]!),
  };
}

async function insertedPieces(): Promise<number> {
  const { rows } = await stack.pool.query<{ n: string }>("SELECT n_tup_ins AS n FROM pg_stat_user_tables WHERE relname = 'turn_checkpoint_pieces'");
  return Number(rows[0]?.n ?? 0);
}

describe('a 200,000-token turn', () => {
  it('heartbeats a cursor under 1 KB throughout while its tokens are checkpointed to Postgres', { timeout: 240_000 }, async () => {
    const started = Date.now();
    const walBefore = (await stack.pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    const [request] = trajectoryRequests('long-turn', stack.problems.slice(0, 1), 1, { turns: 1, maxNewTokens: TURN_TOKENS });
    const { handle } = await submitTrajectory(stack.client, request!);
    const result = handle.result();
    let finished = false;
    void result
      .finally(() => {
        finished = true;
      })
      .catch(() => undefined);

    const seen: { tokens: number; bytes: number }[] = [];
    while (!finished) {
      const heartbeat = await pendingHeartbeat(handle).catch(() => undefined);
      if (heartbeat) {
        const cursor = (heartbeat.details as { checkpoint?: { attempt: number; tokens: number } }).checkpoint;
        expect(cursor, JSON.stringify(heartbeat.details).slice(0, 200)).toBeDefined();
        if (seen.at(-1)?.tokens !== cursor!.tokens) seen.push({ tokens: cursor!.tokens, bytes: heartbeat.bytes });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outcome = await result;
    const wallMs = Date.now() - started;

    expect(outcome.status).toBe('completed');
    expect(outcome.turns).toHaveLength(1);
    expect(outcome.turns[0]).toMatchObject({ outputLen: TURN_TOKENS, finishReason: 'length' });
    // Heartbeats seen all along the turn, each one small, however far into the turn.
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(seen.every(({ bytes }) => bytes < 1024)).toBe(true);
    expect(seen.every(({ tokens }, i) => i === 0 || tokens > seen[i - 1]!.tokens)).toBe(true);
    expect(Math.max(...seen.map(({ tokens }) => tokens))).toBeGreaterThan(TURN_TOKENS / 2);

    const [row] = await stack.exported('long-turn/');
    expect(row!.status).toBe('completed');
    expect(row!.packed_input_ids.length - row!.prompt_lens[0]!).toBe(TURN_TOKENS);
    expectTokenVersions(row!);
    // The checkpoint is working storage: gone once the turn output is saved.
    const { rows: left } = await stack.pool.query(
      'SELECT (SELECT count(*) FROM turn_checkpoints)::int AS heads, (SELECT count(*) FROM turn_checkpoint_pieces)::int AS pieces',
    );
    expect(left[0]).toEqual({ heads: 0, pieces: 0 });

    const { rows: wal } = await stack.pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS bytes', [walBefore]);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // table statistics reach other sessions within about a second
    const lastCursor = seen.at(-1)!.tokens;
    console.log(
      `200K-token turn: ${wallMs} ms wall; ${seen.length} heartbeats seen, ${Math.min(...seen.map((s) => s.bytes))}-${Math.max(...seen.map((s) => s.bytes))} bytes ` +
        `(${seen.map((s) => `${s.tokens}:${s.bytes}`).join(' ')}); ${await insertedPieces()} checkpoint writes, last cursor ${lastCursor} tokens ` +
        `= ${lastCursor * 12} checkpoint bytes; ${wal[0]!.bytes} WAL bytes for the whole trajectory`,
    );
  });
});

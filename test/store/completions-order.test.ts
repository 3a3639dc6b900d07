import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { joinGroup, recordMemberFinished } from '../../src/store/write/rollout-groups.js';
import { inTransaction } from '../../src/store/transaction.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

/** Collects what the stream yields for `ms`, then stops it. */
async function streamFor(client: RolloutClient, runId: string, ms: number): Promise<string[]> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), ms);
  const seen: string[] = [];
  for await (const group of client.completions(runId, { signal: stop.signal, pollMs: 20 })) seen.push(group.groupId);
  clearTimeout(timer);
  return seen;
}

describe('RolloutClient.completions', () => {
  it('yields a group whose transaction finished it first but committed last, once, before the groups after it', async () => {
    const run: RunConfig = { runId: 'late-commit', maxHeadOffpolicyness: 100, batchSize: 1, maxConcurrent: 8 };
    for (const name of ['early', 'late']) await joinGroup(db.pool, `${name}/0`, name, { run, groupId: name, size: 1, sample: 0 });
    // The stream reads Postgres only.
    const client = RolloutClient.fromConnections({} as Client, db.pool, db.url);

    // The race, staged: transaction A starts first (its id is drawn), B finishes "late" and commits, then A finishes
    // "early" with a finished_at before "late"'s (A read the clock before B did, then waited on a lock: the window
    // between the UPDATE's clock_timestamp() and its triggers' row locks) and commits last. A finished_at cursor
    // yields "late", moves past "early", and never yields it.
    const open = await db.pool.connect();
    try {
      await open.query('BEGIN');
      await open.query('SELECT pg_current_xact_id()');
      await inTransaction(db.pool, (other) => recordMemberFinished(other, 'late/0', true, 2));

      // While a transaction older than "late"'s is open, the stream holds "late" back.
      const stream = streamFor(client, run.runId, 1_500);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await recordMemberFinished(open, 'early/0', true, 1);
      await open.query(
        `UPDATE rollout_groups SET finished_at = (SELECT finished_at - interval '1 millisecond' FROM rollout_groups WHERE group_id = 'late')
         WHERE group_id = 'early'`,
      );
      await open.query('COMMIT');
      expect(await stream).toEqual(['early', 'late']);
    } finally {
      open.release();
    }
  });
});

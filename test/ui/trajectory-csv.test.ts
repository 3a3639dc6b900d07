import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOWNLOAD_ROWS, trajectoryCsvDownload } from '../../src/ui/trajectory-csv.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

// The filtered list as CSV, streamed page by page (issue 35: 10,000 rows took 3–4 s before the first byte).
let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  // `csv/p<i>/0`: one trajectory a second, so newest first is i descending.
  await db.pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, rewards, raw_rewards, successes, output_tokens, finished_at)
     SELECT 'csv/p' || i || '/0', 'p' || i, 'completed', 'seed', 1, 0, '{1}', '{1}', '{t}', i, timestamptz '2026-01-01' + i * interval '1 second'
     FROM generate_series(0, 249) AS i`,
  );
});

afterAll(async () => {
  await db?.stop();
});

const newestFirst = { sort: 'finished', direction: 'desc' } as const;

async function chunks(body: ReadableStream<Uint8Array>): Promise<string[]> {
  const parts: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of body) parts.push(decoder.decode(chunk));
  return parts;
}

describe('the CSV download', () => {
  it('streams the header and a small first page, then the rest page by page, in the list order, every row once', async () => {
    const download = await trajectoryCsvDownload(db.pool, { filter: { runId: 'csv' }, order: newestFirst });
    // More rows than the first page: how many in all is known only once streamed.
    expect(download.complete).toBe('unknown');
    expect(download.rows).toBeNull();
    const parts = await chunks(download.body);
    expect(parts[0]).toBe('trajectory_id,qid,status,turns,verdicts,correct_turns,return_r0,output_tokens,staleness,failure_type,finished_at\n');
    expect(parts[1]!.trim().split('\n')).toHaveLength(100);
    const ids = parts
      .join('')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]);
    expect(ids).toEqual(Array.from({ length: 250 }, (_, i) => `csv/p${249 - i}/0`));
  });

  it('stops at its row limit across pages, and says it is complete when the first page held every row', async () => {
    const cut = await trajectoryCsvDownload(db.pool, { filter: { runId: 'csv' }, order: newestFirst }, 7, [2, 3]);
    const lines = (await chunks(cut.body)).join('').trim().split('\n');
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(Array.from({ length: 7 }, (_, i) => `csv/p${249 - i}/0`));
    const small = await trajectoryCsvDownload(db.pool, { filter: { runId: 'csv', qid: 'p3' }, order: newestFirst });
    expect([small.complete, small.rows]).toEqual(['true', 1]);
    expect((await chunks(small.body)).join('').trim().split('\n')).toHaveLength(2);
    expect(DOWNLOAD_ROWS).toBe(10_000);
  });

  it('stops reading pages when the client goes away', async () => {
    const download = await trajectoryCsvDownload(db.pool, { filter: { runId: 'csv' }, order: newestFirst }, DOWNLOAD_ROWS, [1]);
    const reader = download.body.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect((await reader.read()).done).toBe(true);
  });
});

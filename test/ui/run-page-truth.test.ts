import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimTurnCheckpoint } from '../../src/store/turn-checkpoints.js';
import { savePrompt } from '../../src/store/turn-store.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { uiApp } from '../../src/ui/app.js';
import { FALLBACK_ATTEMPT_BASE } from '../../src/workflows/turn-affinity.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

// Issue 35: every number the run pages show means what its label says. One Postgres, rows written as the activities
// write them, pages read through the UI's routes.
let db: TestDatabase;
let app: Hono;

beforeAll(async () => {
  db = await startTestDatabase();
  app = uiApp({ pool: db.pool, tokenizer: await loadModelTokenizer(), assets: new Map() });
});

afterAll(async () => {
  await db?.stop();
});

const text = async (path: string, status = 200) => {
  const response = await app.request(path);
  const body = await response.text();
  expect(response.status, body.slice(0, 300)).toBe(status);
  return body;
};

/** The cells of the table row that links to `id`, tags stripped. */
const rowCells = (page: string, id: string) => {
  const row = page.split('<tr').find((r) => r.includes(`href="/trajectories/${encodeURIComponent(id)}"`)) ?? '';
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
};

describe('the live page\'s attempt column', () => {
  it('shows the attempt a person counts, never the fencing offset of a turn that fell back', async () => {
    // Three turns generating: one on its first attempt, one on the shared queue's first attempt after falling back
    // from its server's queue (stored as 101), one retried twice there (103).
    for (const [id, stored] of [['live/q/0', 1], ['live/q/1', FALLBACK_ATTEMPT_BASE + 1], ['live/q/2', FALLBACK_ATTEMPT_BASE + 3]] as const) {
      await savePrompt(db.pool, id, [1, 2], 'prompt');
      if (stored > 1) await claimTurnCheckpoint(db.pool, { trajectoryId: id, turn: 0, attempt: 1 });
      await claimTurnCheckpoint(db.pool, { trajectoryId: id, turn: 0, attempt: stored });
    }
    const page = await text('/live');
    // trajectory, phase, turn, tokens, attempt, idle, flag
    expect(rowCells(page, 'live/q/0')[4]).toBe('1');
    expect(rowCells(page, 'live/q/1')[4]).toBe('1 after fallback');
    expect(rowCells(page, 'live/q/1')[6]).toBe('');
    expect(rowCells(page, 'live/q/2')[4]).toBe('3 after fallback');
    expect(rowCells(page, 'live/q/2')[6]).toBe('retried');
    expect(page).not.toMatch(/>10[1-3]</);
  });
});

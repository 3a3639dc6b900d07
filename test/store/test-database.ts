import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';
import { openDatabase } from '../../src/store/database.js';

/** A real, migrated Postgres for store tests that need no Temporal: the test stack's database, alone. */
export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  stop(): Promise<void>;
}

export async function startTestDatabase(): Promise<TestDatabase> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-store-test-'));
  await chmod(stateDir, 0o755);
  try {
    const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
    const pool = await openDatabase(postgres.url).catch(async (error) => {
      await postgres.stop();
      throw error;
    });
    return {
      url: postgres.url, pool,
      stop: async () => {
        await pool.end().catch(() => undefined);
        await postgres.stop();
        await rm(stateDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(stateDir, { recursive: true, force: true });
    throw error;
  }
}

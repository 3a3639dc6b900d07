import type pg from 'pg';
import { loadConfig } from '../config.js';
import { startStack } from '../stack/local-stack.js';
import { openDatabase } from '../store/database.js';

/**
 * Runs `work` against DATABASE_URL, or the embedded Postgres (starting it again if it is not running). It is also
 * told where Temporal is (TEMPORAL_ADDRESS, or the embedded server's port), which is not started here.
 */
export async function withDatabase<T>(work: (pool: pg.Pool, databaseUrl: string, temporalAddress: string) => Promise<T>): Promise<T> {
  const stack = await startStack(loadConfig(), { temporal: false });
  try {
    const pool = await openDatabase(stack.databaseUrl, { max: 2 });
    try {
      return await work(pool, stack.databaseUrl, stack.temporalAddress);
    } finally {
      await pool.end();
    }
  } finally {
    await stack.stop();
  }
}

import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';
import { openDatabase } from '../../src/store/database.js';

/** A real, migrated Postgres for store tests that need no Temporal: the test stack's database, alone. */
export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  stop(): Promise<void>;
}

/**
 * A fresh, migrated database of its own: in the suite's shared Postgres (test/store/shared-postgres.ts, the
 * vitest config's globalSetup), else, under a config without it, in a Postgres started for this call.
 */
export async function startTestDatabase(): Promise<TestDatabase> {
  const shared = inject('sharedPostgresUrl');
  return shared ? databaseIn(shared) : databaseOnItsOwnServer();
}

async function databaseIn(serverUrl: string): Promise<TestDatabase> {
  const name = `ratchet_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  // template0: a pristine copy, whatever a test may have left in template1.
  await admin(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
  const url = withDatabase(serverUrl, name);
  const pool = await openDatabase(url).catch(async (error) => {
    await admin(`DROP DATABASE ${name} WITH (FORCE)`);
    throw error;
  });
  return {
    url,
    pool,
    stop: async () => {
      await pool.end().catch(() => undefined);
      // FORCE: a connection a test left open (a CLI child's, a UI server's) must not keep the database alive.
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function databaseOnItsOwnServer(): Promise<TestDatabase> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-store-test-'));
  await chmod(stateDir, 0o755);
  try {
    const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
    const pool = await openDatabase(postgres.url).catch(async (error) => {
      await postgres.stop();
      throw error;
    });
    return {
      url: postgres.url,
      pool,
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

import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import { startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';
import { freePort } from '../../src/stack/free-port.js';
import { startTemporalDevServer } from '../../src/stack/temporal-dev-server.js';
import { openDatabase } from '../../src/store/database.js';
import { ensureSearchAttributes } from '../../src/workers/temporal-connection.js';

/** The real parts the soak runs on, started by this process (so it holds their PIDs and stops them). */
export interface SoakStack {
  temporalAddress: string;
  databaseUrl: string;
  client: Client;
  pool: pg.Pool;
  stop(): Promise<void>;
}

/**
 * A Temporal dev server (in-memory SQLite, headless: the fastest the CLI offers) and a project-local Postgres in
 * a throw-away folder, each on a free loopback port, so the soak never touches a developer's `ratchet dev` state.
 */
export async function startSoakStack(stateDir: string): Promise<SoakStack> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-soak-'));
  await chmod(dataDir, 0o755);
  const stops: (() => Promise<unknown>)[] = [() => rm(dataDir, { recursive: true, force: true })];
  const stop = async () => { for (const fn of stops.reverse()) await fn().catch(() => undefined); };
  try {
    const temporal = await startTemporalDevServer({ stateDir, port: await freePort(), headless: true });
    stops.push(temporal.stop);
    const postgres = await startEmbeddedPostgresOnFreePort(dataDir);
    stops.push(postgres.stop);
    const pool = await openDatabase(postgres.url, { max: 8 });
    stops.push(() => pool.end());
    const connection = await Connection.connect({ address: temporal.address });
    stops.push(() => connection.close());
    await ensureSearchAttributes(connection, 'default');
    return { temporalAddress: temporal.address, databaseUrl: postgres.url, client: new Client({ connection }), pool, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

import path from 'node:path';
import { startEmbeddedPostgres, startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';
import { freePort } from '../../src/stack/free-port.js';
import { startTemporalDevServer } from '../../src/stack/temporal-dev-server.js';
import { ensureTemporalServer, startTemporalServer } from '../../src/stack/temporal-server.js';

/** The Temporal a test stack runs against, and the processes a fault test may kill or freeze. */
export interface TestTemporal {
  address: string;
  pid?: number;
  /** The real server's own Postgres (none for the dev server, which keeps its state in SQLite). */
  postgres?: { pid?: number; url: string; stop(): Promise<void> };
  /** Starts the real server again on the same address and database (after a kill). */
  restart?(): Promise<void>;
  /** Starts the real server's Postgres again on the same port and data (after a kill). */
  restartPostgres?(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `temporal server start-dev` by default; the Temporal server users deploy (Postgres, SQL visibility, four
 * history shards: src/stack/temporal-server.ts) when RATCHET_TEST_TEMPORAL=server, as
 * `npm run test:temporal-server` sets it for its suite.
 */
export async function startTestTemporal(stateDir: string): Promise<TestTemporal> {
  if (process.env.RATCHET_TEST_TEMPORAL !== 'server') {
    return startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
  }
  const binaries = await ensureTemporalServer(path.resolve('.ratchet'));
  const postgresDir = path.join(stateDir, 'temporal-db');
  let postgres = await startEmbeddedPostgresOnFreePort(postgresDir);
  const url = new URL(postgres.url);
  const db = { host: url.hostname, port: Number(url.port), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  const port = await freePort();
  let server = await startTemporalServer({ binaries, db, port }).catch(async (error: unknown) => { await postgres.stop(); throw error; });
  const temporal: TestTemporal = {
    address: server.address,
    pid: server.pid,
    postgres,
    restartPostgres: async () => {
      await postgres.stop();
      postgres = await startEmbeddedPostgres(postgresDir, db.port);
      temporal.postgres = postgres;
    },
    restart: async () => {
      await server.stop();
      server = await startTemporalServer({ binaries, db, port });
      temporal.pid = server.pid;
    },
    stop: async () => {
      await server.stop();
      await postgres.stop();
    },
  };
  return temporal;
}

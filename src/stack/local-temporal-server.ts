import path from 'node:path';
import { startEmbeddedPostgres, startEmbeddedPostgresOnFreePort, type EmbeddedPostgres } from './embedded-postgres.js';
import { freePort } from './free-port.js';
import { ensureTemporalServer, startTemporalServer, type TemporalServerDatabase } from './temporal-server.js';

/** The real Temporal server on a Postgres of its own, both on this machine: what `ratchet dev --temporal server`, the tests and the benchmarks run. */
export interface LocalTemporalServer {
  address: string;
  /** The server process (every service in one). */
  pid?: number;
  /** Temporal's own Postgres: its persistence and SQL visibility, apart from Ratchet's database. */
  postgres: EmbeddedPostgres;
  /** Starts the server again on the same address and database (after a kill). */
  restart(): Promise<void>;
  /** Starts Temporal's Postgres again on the same port and data (after a kill). */
  restartPostgres(): Promise<void>;
  stop(): Promise<void>;
}

export interface LocalTemporalServerOptions {
  /** Where Temporal's Postgres keeps its data (a `temporal-db` folder is made inside). */
  stateDir: string;
  /** Where the built server and schema tool are cached (`<toolsDir>/tools/temporal-server-<version>`). */
  toolsDir: string;
  /** The frontend's port; a free one when absent. */
  port?: number;
  log?: (line: string) => void;
}

/**
 * Builds the pinned server once (cached), starts an embedded Postgres for it, creates or updates its schemas and
 * starts every service in one process with the namespace registered. A failed start stops what it started.
 */
export async function startLocalTemporalServer(options: LocalTemporalServerOptions): Promise<LocalTemporalServer> {
  const binaries = await ensureTemporalServer(options.toolsDir, options.log);
  const postgresDir = path.join(options.stateDir, 'temporal-db');
  let postgres = await startEmbeddedPostgresOnFreePort(postgresDir);
  const url = new URL(postgres.url);
  const db: TemporalServerDatabase = {
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
  const port = options.port ?? (await freePort());
  let server = await startTemporalServer({ binaries, db, port }).catch(async (error: unknown) => {
    await postgres.stop();
    throw error;
  });
  const local: LocalTemporalServer = {
    address: server.address,
    pid: server.pid,
    postgres,
    restartPostgres: async () => {
      await postgres.stop();
      postgres = await startEmbeddedPostgres(postgresDir, db.port);
      local.postgres = postgres;
    },
    restart: async () => {
      await server.stop();
      server = await startTemporalServer({ binaries, db, port });
      local.pid = server.pid;
    },
    stop: async () => {
      try {
        await server.stop();
      } finally {
        await postgres.stop();
      }
    },
  };
  return local;
}

import path from 'node:path';
import { startEmbeddedTemporal } from '../../src/stack/embedded-temporal.js';

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
 * history shards: src/stack/local-temporal-server.ts) when RATCHET_TEST_TEMPORAL=server, as
 * `npm run test:temporal-server` sets it for its suite.
 */
export async function startTestTemporal(stateDir: string): Promise<TestTemporal> {
  return startEmbeddedTemporal(process.env.RATCHET_TEST_TEMPORAL === 'server' ? 'server' : 'dev', {
    stateDir,
    toolsDir: path.resolve('.ratchet'),
    headless: true,
  });
}

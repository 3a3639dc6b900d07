import { freePort } from './free-port.js';
import { startLocalTemporalServer, type LocalTemporalServer } from './local-temporal-server.js';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server.js';

/** Which Temporal a process starts for itself: the dev server (SQLite, with its UI), or the server users deploy (Postgres, no UI). */
export type EmbeddedTemporal = 'dev' | 'server';

export interface EmbeddedTemporalOptions {
  /** Where the server keeps its data: the real server's Postgres goes in a folder here. */
  stateDir: string;
  /** Where the Temporal CLI is looked for, and the real server is built and cached; `stateDir` unless given. */
  toolsDir?: string;
  /** The frontend's port; a free one when absent. */
  port?: number;
  /** The dev server's UI port, the frontend's + 1000 unless given; none when `headless`. */
  uiPort?: number;
  headless?: boolean;
  /** The dev server's SQLite file; in memory when absent. */
  dbFile?: string;
  log?: (line: string) => void;
}

/** A started Temporal of either kind; only the dev server has a UI, only the real server a Postgres of its own. */
export type StartedEmbeddedTemporal = ({ kind: 'dev' } & TemporalDevServer) | ({ kind: 'server' } & LocalTemporalServer);

/** The one place `ratchet dev`, the tests and the benchmarks start a Temporal of their own, of either kind. */
export async function startEmbeddedTemporal(kind: EmbeddedTemporal, options: EmbeddedTemporalOptions): Promise<StartedEmbeddedTemporal> {
  const toolsDir = options.toolsDir ?? options.stateDir;
  if (kind === 'server') {
    return Object.assign(await startLocalTemporalServer({ stateDir: options.stateDir, toolsDir, port: options.port, log: options.log }), { kind });
  }
  const server = await startTemporalDevServer({
    stateDir: toolsDir,
    port: options.port ?? (await freePort()),
    uiPort: options.uiPort,
    headless: options.headless,
    dbFile: options.dbFile,
  });
  return Object.assign(server, { kind });
}

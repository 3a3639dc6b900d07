import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgresOnFreePort, type EmbeddedPostgres } from './embedded-postgres.js';
import { freePort } from './free-port.js';
import { connectStack, loopbackTemporal, type StackConnections } from './stack-connections.js';
import { Teardown } from './teardown.js';
import { startTemporalDevServer } from './temporal-dev-server.js';

/** A Temporal this process started and stops. */
export interface StartedTemporal {
  address: string;
  pid?: number;
  stop(): Promise<void>;
}

export interface ScratchStackOptions<T extends StartedTemporal> {
  /** The throw-away folder's name prefix (under the system temp folder). */
  prefix?: string;
  /** Starts Temporal given the throw-away folder: a headless dev server on a free port unless given. */
  startTemporal?: (scratchDir: string) => Promise<T>;
  /** Connections in the database pool (10 unless given). */
  poolMax?: number;
}

/** A Temporal and a Postgres on free loopback ports, with a client of each; `stop` takes it all down. */
export interface ScratchStack<T extends StartedTemporal = StartedTemporal> extends StackConnections {
  temporalAddress: string;
  databaseUrl: string;
  temporal: T;
  postgres: EmbeddedPostgres;
  /** The Temporal server's and the postmaster's processes (the stall tests and the benchmarks watch them). */
  pids: { temporal?: number; postgres?: number };
  /** Takes the stack down; whatever is added to it later is taken down first. */
  teardown: Teardown;
  stop(): Promise<void>;
}

/**
 * The stack the tests, the benchmarks and the soak run on: a headless Temporal dev server (in-memory SQLite, the
 * fastest the CLI offers) and a project-local Postgres in a throw-away folder, each on a free loopback port, so
 * it never touches a developer's `ratchet dev` state.
 */
export async function startScratchStack<T extends StartedTemporal = StartedTemporal>(options: ScratchStackOptions<T> = {}): Promise<ScratchStack<T>> {
  const scratchDir = await mkdtemp(path.join(os.tmpdir(), options.prefix ?? 'ratchet-stack-'));
  await chmod(scratchDir, 0o755);
  const teardown = new Teardown();
  teardown.add('scratch folder', () => rm(scratchDir, { recursive: true, force: true }));
  return teardown.guard(async () => {
    // Side by side: each is a second or two of a process starting and waiting on its own files, apart.
    const [temporalStart, postgresStart] = await Promise.allSettled([
      options.startTemporal ? options.startTemporal(scratchDir) : (startDevServer() as Promise<T>),
      startEmbeddedPostgresOnFreePort(scratchDir),
    ]);
    if (temporalStart.status === 'fulfilled') teardown.add('Temporal', () => temporalStart.value.stop());
    if (postgresStart.status === 'fulfilled') teardown.add('Postgres', () => postgresStart.value.stop());
    if (temporalStart.status === 'rejected') throw temporalStart.reason;
    if (postgresStart.status === 'rejected') throw postgresStart.reason;
    const temporal = temporalStart.value;
    const postgres = postgresStart.value;
    const at = { temporalAddress: temporal.address, databaseUrl: postgres.url };
    const connections = await connectStack(at, loopbackTemporal(temporal.address), teardown, { max: options.poolMax });
    return {
      ...at,
      ...connections,
      temporal,
      postgres,
      pids: { temporal: temporal.pid, postgres: postgres.pid },
      teardown,
      stop: () => teardown.run(),
    };
  });
}

/** A headless dev server on a free port; the Temporal CLI is looked for in the project's `.ratchet`. */
async function startDevServer(): Promise<StartedTemporal> {
  return startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
}

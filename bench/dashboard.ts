// The dashboard at scale: one training run of a million trajectories (and a 10K one, and two plain runs) in an
// embedded Postgres, written by set-based SQL (bench/dashboard/rows.ts says how), then the UI
// (startRatchetUi) timed endpoint by endpoint with sequential requests: p50/p95 per endpoint, and the run page's
// poll at 10K against 1M to show it does not grow with the run.
//
// `npm run bench:dashboard -- [--trajectories 1000000] [--small 10000] [--requests 20] [--state-dir DIR]
//   [--path 'name=/url'] [--only substring[,substring...]]`
// --state-dir keeps the database (seeding a million rows takes minutes) and reuses it next time: pending migrations
// are applied to it on open, runs already seeded are not seeded again. --path adds an endpoint (repeatable; `{run}`,
// `{small}` and `{group}` are replaced). Prints a table on stderr and one JSON object on stdout.
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import '../src/stack/tool-logging.js';
import { startEmbeddedPostgresOnFreePort } from '../src/stack/embedded-postgres.js';
import pg from 'pg';
import { openDatabase } from '../src/store/database.js';
import { migrate } from '../src/store/schema/migrations.js';
import { loadModelTokenizer } from '../src/tokens/model-tokenizer.js';
import { startRatchetUi } from '../src/ui/server.js';
import { runStatus } from '../src/store/read/run-status.js';
import { listRuns, runCounters } from '../src/store/read/run-views.js';
import { GROUP_SIZE, seedSubmissions, seedSyntheticRun, syntheticGroupId, syntheticVersions, type SyntheticRun } from './dashboard/rows.js';

const { values: flags } = parseArgs({
  options: {
    trajectories: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '20' },
    'state-dir': { type: 'string' },
    path: { type: 'string', multiple: true, default: [] },
    only: { type: 'string' },
  },
});
const trajectories = Number(flags.trajectories);
const small = Number(flags.small);
const requests = Number(flags.requests);
if (![trajectories, small, requests].every((n) => Number.isInteger(n) && n > 0))
  throw new Error('--trajectories, --small and --requests take positive integers');

const big = `bench-${trajectories}`;
// The small run has the big one's shape (as many policy versions, as long a span) and only fewer trajectories, so the
// two polls compare the same charts and counters at two sizes.
const BIG: SyntheticRun = { runId: big, trajectories, kind: 'training', spanMinutes: 600 };
const smallRun = `bench-${small}-shaped`;
const RUNS: SyntheticRun[] = [
  BIG,
  { runId: smallRun, trajectories: small, kind: 'training', spanMinutes: 600, versions: syntheticVersions(BIG) },
  { runId: 'plain-a', trajectories: 2000, kind: 'plain', spanMinutes: 30 },
  { runId: 'plain-b', trajectories: 2000, kind: 'plain', spanMinutes: 30 },
];
const group = syntheticGroupId(big, 1234);
const size = (n: number) => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}K` : String(n));
const ENDPOINTS: [string, string][] = [
  ['runs list /', '/'],
  [`run page ${size(trajectories)}`, '/runs/{run}'],
  [`run poll ${size(trajectories)}`, '/api/runs/{run}'],
  [`run page ${size(small)}`, '/runs/{small}'],
  [`run poll ${size(small)}`, '/api/runs/{small}'],
  ['list verdict=wrong', '/runs/{run}?verdict=wrong'],
  ['list status=failed', '/runs/{run}?status=failed'],
  ['list qid=q1234', '/runs/{run}?qid=q1234'],
  ['list policyVersion=3', '/runs/{run}?policyVersion=3'],
  ['list stale=1', '/runs/{run}?stale=1'],
  ['list stale, by return', '/runs/{run}?stale=1&sort=reward'],
  ['list stale+runtime_error', '/runs/{run}?stale=1&verdict=runtime_error'],
  ['list failed+wrong', '/runs/{run}?status=failed&verdict=wrong'],
  ['list failed+timeout', '/runs/{run}?status=failed&verdict=timeout'],
  ['list correct then wrong', '/runs/{run}?correctThenWrong=1'],
  ['list truncated', '/runs/{run}?truncated=1'],
  ['list qidContains=Q12', '/runs/{run}?qidContains=Q12'],
  ['list CSV verdict=wrong', '/runs/{run}/trajectories.csv?verdict=wrong'],
  ['problems', '/runs/{run}/problems'],
  ['behaviour policy', '/runs/{run}/policy'],
  ['run page, 3 runs compared', '/runs/{run}?compare={small},plain-a'],
  ['run poll, 3 runs compared', '/api/runs/{run}?compare={small},plain-a'],
  ['group page', '/groups/{group}'],
  ['trajectory page', '/trajectories/{trajectory}'],
  ['live', '/live'],
  ...flags.path.map((spec): [string, string] => {
    const at = spec.indexOf('=');
    if (at < 1) throw new Error(`--path takes name=/url, not ${spec}`);
    return [spec.slice(0, at), spec.slice(at + 1)];
  }),
];

const log = (line: string) => process.stderr.write(`${line}\n`);
/** --only: the endpoints whose name contains one of its comma-separated parts. */
const selected = (name: string) => !flags.only || flags.only.split(',').some((part) => name.includes(part));
const stateDir = flags['state-dir'] ? path.resolve(flags['state-dir']) : await mkdtemp(path.join(os.tmpdir(), 'ratchet-dashboard-bench-'));
await mkdir(stateDir, { recursive: true });
await chmod(stateDir, 0o755);
const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
try {
  const seeded = await seedRuns(postgres.url);
  const migrating = performance.now();
  const pool = await openDatabase(postgres.url);
  log(`migrations (with their backfills) applied in ${((performance.now() - migrating) / 1000).toFixed(1)} s`);
  try {
    for (const run of seeded) await seedSubmissions(pool, run.runId, run.kind === 'plain' ? 500 : 0, log);
    await pool.query('ANALYZE');
    await timeEndpoints(pool);
  } finally {
    await pool.end();
  }
} finally {
  await postgres.stop();
  if (!flags['state-dir']) await rm(stateDir, { recursive: true, force: true });
}

/**
 * Writes the runs not there yet, under the schema of migration 010: the migrations that keep aggregates by triggers
 * come after, and their backfills count a million rows in one pass each, where row triggers would run a million
 * times. In a database kept from an earlier run (--state-dir, already migrated), missing runs go through its triggers.
 */
async function seedRuns(url: string): Promise<SyntheticRun[]> {
  const seeding = new pg.Pool({ connectionString: url });
  const seeded: SyntheticRun[] = [];
  try {
    await migrate(seeding, { through: '010_run_columns' });
    for (const run of RUNS) {
      const {
        rows: [present],
      } = await seeding.query('SELECT EXISTS (SELECT 1 FROM trajectories WHERE run_id = $1) AS present', [run.runId]);
      if (present.present) {
        log(`${run.runId}: already seeded in ${stateDir}`);
        continue;
      }
      log(`${run.runId}: seeding ${run.trajectories} trajectories (${run.kind})`);
      await seedSyntheticRun(seeding, run, log);
      seeded.push(run);
    }
  } finally {
    await seeding.end();
  }
  return seeded;
}

/** Times every endpoint in turn against the UI over this database; prints a table (stderr) and JSON (stdout). */
async function timeEndpoints(pool: pg.Pool): Promise<void> {
  const ui = await startRatchetUi({ pool, tokenizer: await loadModelTokenizer(), port: 0 });
  try {
    const results = [];
    for (const [name, template] of ENDPOINTS) {
      if (!selected(name)) continue;
      const url =
        ui.url +
        template
          .replaceAll('{run}', encodeURIComponent(big))
          .replaceAll('{small}', encodeURIComponent(smallRun))
          .replaceAll('{group}', encodeURIComponent(group))
          .replaceAll('{trajectory}', encodeURIComponent(`${group}/3`));
      const timing = { name, path: url.slice(ui.url.length), ...(await timeEndpoint(url, requests)), load1: +os.loadavg()[0]!.toFixed(2) };
      results.push(timing);
      // The machine's 1-minute load beside each timing: the same page is slower on a machine others are using.
      log(
        `${name.padEnd(24)} p50 ${timing.p50Ms.toFixed(0).padStart(6)} ms  p95 ${timing.p95Ms.toFixed(0).padStart(6)} ms  max ${timing.maxMs.toFixed(0).padStart(6)} ms  first byte p50/p95 ${timing.firstByteP50Ms.toFixed(0)}/${timing.firstByteP95Ms.toFixed(0)} ms  ${timing.kb} KB  load ${timing.load1.toFixed(1)}  status ${timing.status}${timing.error ? ` ${timing.error}` : ''}`,
      );
    }
    // The counters alone (what every page and the poll read first), beside the endpoints that include them.
    const counters: [string, () => Promise<unknown>][] = [
      [`runCounters ${size(trajectories)}`, () => runCounters(pool, big)],
      [`runCounters ${size(small)}`, () => runCounters(pool, smallRun)],
      [`runStatus ${size(trajectories)}`, () => runStatus(pool, big)],
      ['listRuns', () => listRuns(pool)],
    ];
    for (const [name, call] of counters) {
      if (!selected(name)) continue;
      const timing = { name, path: '(store function)', ...(await timeCall(call, requests)), kb: 0, status: 200 };
      results.push(timing);
      log(
        `${name.padEnd(24)} p50 ${timing.p50Ms.toFixed(1).padStart(6)} ms  p95 ${timing.p95Ms.toFixed(1).padStart(6)} ms  max ${timing.maxMs.toFixed(1).padStart(6)} ms`,
      );
    }
    const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version };
    process.stdout.write(
      `${JSON.stringify({ trajectories: Math.ceil(trajectories / GROUP_SIZE) * GROUP_SIZE, small, requests, machine, results }, null, 2)}\n`,
    );
  } finally {
    await ui.close();
  }
}

/** Two warm-up calls, then `n` sequential ones: latency percentiles. */
async function timeCall(call: () => Promise<unknown>, n: number) {
  for (let i = 0; i < 2; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return percentiles(times);
}

function percentiles(times: number[]) {
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;
  return { p50Ms: +at(0.5).toFixed(1), p95Ms: +at(0.95).toFixed(1), maxMs: +times.at(-1)!.toFixed(1) };
}

/**
 * Two warm-up requests, then `n` sequential ones: latency percentiles (to the last byte, and to the first byte of the
 * body: a streamed response, the CSV download, starts long before it ends), the body size and the (last) status.
 */
async function timeEndpoint(url: string, n: number) {
  for (let i = 0; i < 2; i++) await (await fetch(url)).arrayBuffer();
  const times: number[] = [];
  const firstBytes: number[] = [];
  let status = 0;
  let bytes = 0;
  let error: string | undefined;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const response = await fetch(url);
    const chunks: Uint8Array[] = [];
    for await (const chunk of response.body!) {
      if (chunks.length === 0) firstBytes.push(performance.now() - started);
      chunks.push(chunk);
    }
    const body = Buffer.concat(chunks);
    bytes = body.byteLength;
    times.push(performance.now() - started);
    if (chunks.length === 0) firstBytes.push(times.at(-1)!);
    status = response.status;
    if (status !== 200) error = new TextDecoder().decode(body).slice(0, 300);
  }
  const first = percentiles(firstBytes);
  return {
    ...percentiles(times),
    firstByteP50Ms: first.p50Ms,
    firstByteP95Ms: first.p95Ms,
    kb: Math.round(bytes / 1024),
    status,
    ...(error ? { error } : {}),
  };
}

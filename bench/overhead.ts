// What orchestration costs: Ratchet on the real stack, each part in its own process, measured per trajectory and
// per turn, and its wall time against an in-process loop running the same domain code without Temporal.
// `npm run bench:overhead -- [--trajectories 256] [--turns 5] [--cpu-workers 1] [--phases instant,decode,floor]
// [--temporal dev,server]`: `server` is the Temporal server users deploy (Postgres, SQL visibility, four history
// shards: src/stack/local-temporal-server.ts, built once by `npm run setup:temporal-server`), measured beside the dev
// server in one run. `--loop-schedules turn,trajectory`: the in-process loop with a slot per turn (AReaL's), and with
// a slot per trajectory (the schedule Ratchet's GPU worker keeps with turn affinity); `--turn-affinity off` runs
// Ratchet's turns all through the shared queue. Each pass also prints where its time went: turn timings by turn,
// the slots' occupancy over the wall time, and the gap between two turns in Temporal (docs/benchmarks.md).
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import '../src/stack/tool-logging.js';
import { loadDataset } from '../src/datasets/index.js';
import { createBackend } from '../src/policy/backend-config.js';
import { trajectoryRequests } from '../src/client/submit.js';
import { startEmbeddedPostgresOnFreePort } from '../src/stack/embedded-postgres.js';
import { freePort } from '../src/stack/free-port.js';
import { startEmbeddedTemporal } from '../src/stack/embedded-temporal.js';
import { openDatabase } from '../src/store/database.js';
import { loadModelTokenizer } from '../src/tokens/model-tokenizer.js';
import { VerifierPool } from '../src/verifier/index.js';
import { ensureSearchAttributes } from '../src/temporal/connection.js';
import { startRatchetProcess, type RatchetProcess } from './overhead/child-process.js';
import { runInProcessLoop } from './overhead/in-process-loop.js';
import { runFloorPass } from './overhead/floor-pass.js';
import { CpuMeter, treeCpuSeconds } from './overhead/process-cpu.js';
import { betweenTurns, historySize, runRatchetPass, slotTimeline } from './overhead/ratchet-pass.js';

const { values: flags } = parseArgs({
  options: {
    trajectories: { type: 'string', default: '256' },
    turns: { type: 'string', default: '5' },
    'cpu-workers': { type: 'string', default: '1' },
    phases: { type: 'string', default: 'instant,decode' },
    slots: { type: 'string', default: '32' },
    'decode-tokens-per-second': { type: 'string', default: '200' },
    'turn-tokens': { type: 'string', default: '1000' },
    'loop-schedules': { type: 'string', default: 'turn,trajectory' },
    // `off`: every turn through the shared queue, first come first served, as the loop's slot per turn.
    'turn-affinity': { type: 'string', default: 'on' },
    // postgres: watch the stored rows, as a trainer consuming from Postgres does; results: wait on each workflow.
    'wait-on': { type: 'string', default: 'postgres' },
    temporal: { type: 'string', default: 'dev' },
    // Postgres's statements per trajectory, from pg_stat_statements (loaded for this run only).
    statements: { type: 'boolean', default: false },
  },
});
const trajectories = Number(flags.trajectories);
const turns = Number(flags.turns);
const cpuWorkers = Number(flags['cpu-workers']);
const slots = Number(flags.slots);
const DATASET = path.resolve(import.meta.dirname, '../data/sample.jsonl');

const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-overhead-'));
// Readable by the postgres user, so both Postgres data folders stay inside it and go with it (a private folder's
// would be placed under the temp folder instead, and outlive the run).
await chmod(stateDir, 0o755);
const postgres = await startEmbeddedPostgresOnFreePort(
  stateDir,
  3,
  flags.statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {},
);
const pool = await openDatabase(postgres.url);
if (flags.statements) await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
const tokenizer = await loadModelTokenizer();
const { problems } = await loadDataset(DATASET);
const pgPid = postmasterPid(postgres.dataDir);

/** The Temporal a pass runs on: its processes' CPU and, for the real server, its database's transactions. */
interface TemporalUnderTest {
  kind: 'dev' | 'server';
  address: string;
  client: Client;
  cpu: Record<string, () => number>;
  /** Committed and rolled-back transactions in Temporal's databases so far (the dev server keeps SQLite in-process: none). */
  transactions?: () => Promise<number>;
  stop(): Promise<void>;
}

async function startTemporal(kind: 'dev' | 'server'): Promise<TemporalUnderTest> {
  const server = await startEmbeddedTemporal(kind, {
    stateDir,
    toolsDir: path.resolve('.ratchet'),
    headless: true,
    log: (line) => console.error(line),
  });
  const connection = await Connection.connect({ address: server.address });
  await ensureSearchAttributes(connection, 'default');
  const cpu: Record<string, () => number> = { temporalServer: () => treeCpuSeconds(server.pid!) };
  let transactions: (() => Promise<number>) | undefined;
  if (server.kind === 'server') {
    const temporalPgPid = postmasterPid(server.postgres.dataDir);
    cpu.temporalPostgres = () => treeCpuSeconds(temporalPgPid);
    transactions = () => databaseTransactions(server.postgres.url, ['temporal', 'temporal_visibility']);
  }
  return {
    kind,
    address: server.address,
    client: new Client({ connection }),
    cpu,
    transactions,
    stop: async () => {
      await connection.close();
      await server.stop();
    },
  };
}

/** Transactions the named databases have ended, from Postgres's cumulative statistics. */
async function databaseTransactions(url: string, databases: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const {
      rows: [row],
    } = await client.query<{ n: string }>('SELECT sum(xact_commit + xact_rollback)::bigint AS n FROM pg_stat_database WHERE datname = ANY($1)', [
      databases,
    ]);
    return Number(row!.n);
  } finally {
    await client.end();
  }
}

/**
 * Transactions per trajectory of a pass, net of what the databases do when idle (Temporal's shard and queue
 * upkeep). A backend reports its counts when it goes idle, at most every second and at the latest ten seconds
 * later, so each reading waits out that delay.
 */
async function transactionMeter(read: () => Promise<number>): Promise<() => Promise<{ total: number; idlePerSecond: number }>> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 11_000));
  await settle();
  const idleStart = await read();
  await settle();
  const start = await read();
  const idlePerSecond = (start - idleStart) / 11;
  const started = performance.now();
  return async () => {
    await settle();
    const seconds = (performance.now() - started) / 1000;
    return { total: (await read()) - start - idlePerSecond * seconds, idlePerSecond };
  };
}

/**
 * What Postgres ran for the pass, per trajectory: each statement's calls and execution time, the costliest first.
 * Triggers' statements are counted under their own text (track = all); the pass's own poll of the stored rows
 * (`runRatchetPass`) is among them.
 */
/**
 * Where a turn's time went, by turn index (migration 018's columns): waiting on its task queue, generating, and the
 * environment's step. Turns after the first wait on their server's own queue (turn affinity), the first on the shared one.
 */
async function turnTimings(trajectoryIds: string[]): Promise<Record<string, unknown>[]> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `SELECT turn, count(*)::int AS turns,
            round(avg(queue_ms))::int AS queue_mean, round(percentile_cont(0.95) WITHIN GROUP (ORDER BY queue_ms))::int AS queue_p95,
            round(avg(generate_ms))::int AS generate_mean, round(avg(verify_ms))::int AS verify_mean
       FROM monitor_records WHERE trajectory_id = ANY($1) GROUP BY turn ORDER BY turn`,
    [trajectoryIds],
  );
  return rows;
}

async function statementsPerTrajectory(trajectories: number): Promise<{ calls: number; ms: number; query: string }[]> {
  const { rows } = await pool.query<{ calls: string; ms: number; query: string }>(
    `SELECT calls, total_exec_time AS ms, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
      ORDER BY total_exec_time DESC`,
  );
  return rows.map((row) => ({
    calls: round(Number(row.calls) / trajectories),
    ms: +(row.ms / trajectories).toFixed(3),
    query: row.query.replace(/\s+/g, ' ').slice(0, 160),
  }));
}

function postmasterPid(dataDir: string): number {
  // The postmaster's pid is the first line of postmaster.pid; its backends are its children.
  return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** One measured pass: a simulated policy at the given speed, the workers, then Ratchet (and the loop, if asked). */
async function phase(temporal: TemporalUnderTest, name: string, policyFlags: string[], withLoop: boolean): Promise<Record<string, unknown>> {
  const { client } = temporal;
  const started: RatchetProcess[] = [];
  try {
    const policyPort = await freePort();
    const policy = await startRatchetProcess(
      ['sim-policy', '--dataset', DATASET, '--port', String(policyPort), '--seed', '7', '--seed-per-request', ...policyFlags],
      {},
      /simulated policy at/,
    );
    started.push(policy);
    const policyUrl = `http://127.0.0.1:${policyPort}`;
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATABASE_URL: postgres.url,
      RATCHET_POLICY_URL: policyUrl,
      RATCHET_POLICY_BACKEND: 'sglang',
      RATCHET_GPU_SLOTS: String(slots),
    };
    const cpu: RatchetProcess[] = [];
    for (let i = 0; i < cpuWorkers; i++) cpu.push(await startRatchetProcess(['worker', 'cpu'], env, /worker polling/));
    started.push(...cpu);
    const gpu = await startRatchetProcess(['worker', 'gpu'], env, /worker polling/);
    started.push(gpu);
    // Warm up: the workflow bundle, the V8 contexts, the connections.
    await runRatchetPass(client, trajectoryRequests(`warmup-${name}-${Date.now()}`, problems.slice(0, 8), 1, { turns: 1 }));

    const rollout = { turns, turnAffinity: flags['turn-affinity'] !== 'off' };
    const requests = trajectoryRequests(`${name}-${Date.now()}`, problems, Math.ceil(trajectories / problems.length), rollout).slice(0, trajectories);
    const result: Record<string, unknown> = {
      temporal: temporal.kind,
      phase: name,
      trajectories,
      turns,
      cpuWorkers,
      slots,
      turnAffinity: rollout.turnAffinity,
      waitOn: flags['wait-on'],
    };
    const loopWallSeconds: { turn?: number; trajectory?: number } = {};
    if (withLoop) {
      // The loop as AReaL runs it (a slot per turn), then holding a slot per trajectory as Ratchet's GPU worker does.
      for (const schedule of flags['loop-schedules'].split(',') as ('turn' | 'trajectory')[]) {
        const verifier = new VerifierPool({ size: 1 });
        const loopCpu = new CpuMeter({
          loop: () => processCpuSeconds(),
          postgres: () => treeCpuSeconds(pgPid),
          policy: () => treeCpuSeconds(policy.pid),
        });
        const loopStarted = performance.now();
        const loop = await runInProcessLoop(
          { pool, tokenizer, verifier, backend: createBackend('sglang', policyUrl), slots, storedAs: `in-process-loop-${schedule}:`, schedule },
          requests,
        );
        const loopSeconds = (performance.now() - loopStarted) / 1000;
        await verifier.close();
        const key = schedule === 'turn' ? 'inProcessLoop' : 'inProcessLoopSlotPerTrajectory';
        result[key] = { wallSeconds: round(loopSeconds), turns: loop.turns, cpuSeconds: roundAll(loopCpu.read()) };
        loopWallSeconds[schedule] = loopSeconds;
      }
    }

    // Both meters settle together (each waits out Postgres's statistics delay), then the CPU meter starts.
    const [ratchetTransactions, temporalTransactions] = await Promise.all([
      transactionMeter(() => databaseTransactions(postgres.url, ['ratchet'])),
      temporal.transactions && transactionMeter(temporal.transactions),
    ]);
    const meter = new CpuMeter({
      ...Object.fromEntries(cpu.map((worker, i) => [`cpuWorker${cpuWorkers > 1 ? i + 1 : ''}`, () => treeCpuSeconds(worker.pid)])),
      gpuWorker: () => treeCpuSeconds(gpu.pid),
      ...temporal.cpu,
      postgres: () => treeCpuSeconds(pgPid),
      policy: () => treeCpuSeconds(policy.pid),
      client: () => processCpuSeconds(),
    });
    if (flags.statements) await pool.query('SELECT pg_stat_statements_reset()');
    const pass = await runRatchetPass(client, requests, flags['wait-on'] === 'results' ? 'results' : { pool });
    const cpuSeconds = meter.read();
    if (flags.statements) result.statementsPerTrajectory = await statementsPerTrajectory(pass.completed);
    result.turnTimingsMs = await turnTimings(requests.map((request) => request.trajectoryId));
    result.slotTimeline = await slotTimeline(
      client,
      requests.map((request) => request.trajectoryId),
      slots,
    );
    result.betweenTurnsMs = await betweenTurns(
      client,
      requests.slice(0, 32).map((request) => request.trajectoryId),
    );
    const [ratchetTx, temporalTx] = await Promise.all([ratchetTransactions(), temporalTransactions?.()]);
    const ratchetCpu = Object.entries(cpuSeconds)
      .filter(([key]) => !['policy', 'client'].includes(key))
      .reduce((sum, [, s]) => sum + s, 0);
    const history = await historySize(
      client,
      requests.slice(0, 8).map((r) => r.trajectoryId),
    );
    Object.assign(result, {
      completed: pass.completed,
      failed: pass.failed,
      turnsRun: pass.turns,
      wallSeconds: round(pass.wallSeconds),
      trajectoriesPerSecond: round(pass.completed / pass.wallSeconds),
      turnsPerSecond: round(pass.turns / pass.wallSeconds),
      cpuSeconds: roundAll(cpuSeconds),
      cpuMsPerTrajectory: msEach(cpuSeconds, pass.completed),
      // Workers, Temporal server and Postgres: what Ratchet costs. The policy stands in for the GPU; the client is the trainer.
      ratchetCpuMsPerTurn: round((ratchetCpu * 1000) / pass.turns),
      historyEventsPerTrajectory: history.events,
      historyBytesPerTrajectory: history.bytes,
      // Ratchet's count includes the pass's own 100 ms poll of the stored rows (about one per trajectory per 10 s of wall time).
      databaseTransactionsPerTrajectory: {
        ratchet: round(ratchetTx.total / pass.completed),
        ...(temporalTx && { temporal: round(temporalTx.total / pass.completed), temporalIdlePerSecond: round(temporalTx.idlePerSecond) }),
      },
    });
    // Against the loop with a slot per turn (the figure), and against the loop that schedules as Ratchet does.
    if (loopWallSeconds.turn) result.overheadRatio = +(pass.wallSeconds / loopWallSeconds.turn).toFixed(3);
    if (loopWallSeconds.trajectory) result.overheadRatioSameSchedule = +(pass.wallSeconds / loopWallSeconds.trajectory).toFixed(3);
    return result;
  } finally {
    for (const child of started.reverse()) await child.stop();
  }
}

/**
 * Temporal's floor: the trajectory's shape with no work in it, on the same server. No Ratchet, Postgres or policy:
 * what is left is what the server and the SDK cost for one trajectory's tasks and events.
 */
async function floorPhase(temporal: TemporalUnderTest): Promise<Record<string, unknown>> {
  let meter: CpuMeter | undefined;
  const pass = await runFloorPass(temporal.client, temporal.address, trajectories, turns, () => {
    meter = new CpuMeter({ ...temporal.cpu, sdkWorkersAndClient: () => processCpuSeconds() });
  });
  const cpuSeconds = meter!.read();
  return {
    temporal: temporal.kind,
    phase: 'floor',
    workflows: pass.workflows,
    turns,
    wallSeconds: round(pass.wallSeconds),
    workflowsPerSecond: round(pass.workflows / pass.wallSeconds),
    cpuSeconds: roundAll(cpuSeconds),
    cpuMsPerWorkflow: msEach(cpuSeconds, pass.workflows),
  };
}

/** Each process's CPU seconds as milliseconds per trajectory (or workflow), rounded. */
function msEach(cpuSeconds: Record<string, number>, count: number): Record<string, number> {
  return roundAll(Object.fromEntries(Object.entries(cpuSeconds).map(([k, s]) => [k, (s * 1000) / count])));
}

function processCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

function round(n: number): number {
  return +n.toFixed(2);
}

function roundAll(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, round(v)]));
}

const results: Record<string, unknown>[] = [];
try {
  for (const kind of flags.temporal.split(',')) {
    if (kind !== 'dev' && kind !== 'server') throw new Error(`--temporal takes dev, server or both (dev,server); got ${kind}`);
    const temporal = await startTemporal(kind);
    try {
      for (const name of flags.phases.split(',')) {
        const result = name === 'floor' ? await floorPhase(temporal) : await phase(temporal, name, policyFlagsOf(name), name !== 'instant');
        console.log(JSON.stringify(result, null, 2));
        results.push(result);
      }
    } finally {
      await temporal.stop();
    }
  }
  if (flags.temporal.includes(',')) printSideBySide(results);
} finally {
  await pool.end();
  await postgres.stop();
  await rm(stateDir, { recursive: true, force: true });
}

/** Served as a tuned SGLang deployment would be: incremental streaming, a chunk every 16 decode steps. */
function policyFlagsOf(name: string): string[] {
  const stream = ['--incremental-streaming-output', '--chunk-tokens', '16'];
  return name === 'instant'
    ? ['--tokens-per-second', '1000000000', ...stream]
    : ['--tokens-per-second', flags['decode-tokens-per-second'], '--reasoning-tokens', flags['turn-tokens'], ...stream];
}

/** Per trajectory, each phase on each Temporal: the table docs/temporal-server.md keeps. */
function printSideBySide(rows: Record<string, unknown>[]): void {
  console.log('\ntemporal | phase | traj/s | Temporal CPU ms/traj | Ratchet CPU ms/turn | Temporal DB tx/traj | Ratchet DB tx/traj');
  for (const row of rows.filter((r) => r.phase !== 'floor')) {
    const ms = row.cpuMsPerTrajectory as Record<string, number>;
    const tx = row.databaseTransactionsPerTrajectory as Record<string, number>;
    const temporalCpu = (ms.temporalServer ?? 0) + (ms.temporalPostgres ?? 0);
    console.log(
      [
        row.temporal,
        row.phase,
        row.trajectoriesPerSecond,
        round(temporalCpu),
        row.ratchetCpuMsPerTurn,
        tx.temporal ?? 'SQLite, in-process',
        tx.ratchet,
      ].join(' | '),
    );
  }
}

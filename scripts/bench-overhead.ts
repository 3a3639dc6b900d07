// What orchestration costs: Ratchet on the real stack, each part in its own process, measured per trajectory and
// per turn, and its wall time against an in-process loop running the same domain code without Temporal.
// `npm run bench:overhead -- [--trajectories 256] [--turns 5] [--cpu-workers 1] [--phases instant,decode,floor]`
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import '../test/setup-logging.js';
import { loadDataset } from '../src/datasets/index.js';
import { createBackend } from '../src/policy/backend-config.js';
import { trajectoryRequests } from '../src/rollout/submit.js';
import { startEmbeddedPostgresOnFreePort } from '../src/stack/embedded-postgres.js';
import { freePort } from '../src/stack/free-port.js';
import { startTemporalDevServer } from '../src/stack/temporal-dev-server.js';
import { openDatabase } from '../src/store/database.js';
import { loadModelTokenizer } from '../src/tokens/model-tokenizer.js';
import { VerifierPool } from '../src/verifier/index.js';
import { ensureSearchAttributes } from '../src/workers/temporal-connection.js';
import { startRatchetProcess, type RatchetProcess } from './overhead/child-process.js';
import { runInProcessLoop } from './overhead/in-process-loop.js';
import { runFloorPass } from './overhead/floor-pass.js';
import { CpuMeter, treeCpuSeconds } from './overhead/process-cpu.js';
import { historySize, runRatchetPass } from './overhead/ratchet-pass.js';

const { values: flags } = parseArgs({
  options: {
    trajectories: { type: 'string', default: '256' },
    turns: { type: 'string', default: '5' },
    'cpu-workers': { type: 'string', default: '1' },
    phases: { type: 'string', default: 'instant,decode' },
    slots: { type: 'string', default: '32' },
    'decode-tokens-per-second': { type: 'string', default: '200' },
    'turn-tokens': { type: 'string', default: '1000' },
    // postgres: watch the stored rows, as a trainer consuming from Postgres does; results: wait on each workflow.
    'wait-on': { type: 'string', default: 'postgres' },
  },
});
const trajectories = Number(flags.trajectories);
const turns = Number(flags.turns);
const cpuWorkers = Number(flags['cpu-workers']);
const slots = Number(flags.slots);
const DATASET = path.resolve(import.meta.dirname, '../data/sample.jsonl');

const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-overhead-'));
const temporalServer = await startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
const pool = await openDatabase(postgres.url);
const connection = await Connection.connect({ address: temporalServer.address });
await ensureSearchAttributes(connection, 'default');
const client = new Client({ connection });
const tokenizer = await loadModelTokenizer();
const { problems } = await loadDataset(DATASET);
// The postmaster's pid is the first line of postmaster.pid; its backends are its children.
const pgPid = Number(readFileSync(path.join(postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

/** One measured pass: a simulated policy at the given speed, the workers, then Ratchet (and the loop, if asked). */
async function phase(name: string, policyFlags: string[], withLoop: boolean): Promise<Record<string, unknown>> {
  const started: RatchetProcess[] = [];
  try {
    const policyPort = await freePort();
    const policy = await startRatchetProcess(['sim-policy', '--dataset', DATASET, '--port', String(policyPort), '--seed', '7', '--seed-per-request', ...policyFlags], {}, /simulated policy at/);
    started.push(policy);
    const policyUrl = `http://127.0.0.1:${policyPort}`;
    const env = { TEMPORAL_ADDRESS: temporalServer.address, DATABASE_URL: postgres.url, RATCHET_POLICY_URL: policyUrl, RATCHET_POLICY_BACKEND: 'sglang', RATCHET_GPU_SLOTS: String(slots) };
    const cpu: RatchetProcess[] = [];
    for (let i = 0; i < cpuWorkers; i++) cpu.push(await startRatchetProcess(['worker', 'cpu'], env, /worker polling/));
    started.push(...cpu);
    const gpu = await startRatchetProcess(['worker', 'gpu'], env, /worker polling/);
    started.push(gpu);
    // Warm up: the workflow bundle, the V8 contexts, the connections.
    await runRatchetPass(client, trajectoryRequests(`warmup-${name}-${Date.now()}`, problems.slice(0, 8), 1, { turns: 1 }));

    const requests = trajectoryRequests(`${name}-${Date.now()}`, problems, Math.ceil(trajectories / problems.length), { turns }).slice(0, trajectories);
    const result: Record<string, unknown> = { phase: name, trajectories, turns, cpuWorkers, slots, waitOn: flags['wait-on'] };
    if (withLoop) {
      const verifier = new VerifierPool({ size: 1 });
      const loopCpu = new CpuMeter({ loop: () => processCpuSeconds(), postgres: () => treeCpuSeconds(pgPid), policy: () => treeCpuSeconds(policy.pid) });
      const loopStarted = performance.now();
      const loop = await runInProcessLoop({ pool, tokenizer, verifier, backend: createBackend('sglang', policyUrl), slots, storedAs: 'in-process-loop:' }, requests);
      const loopSeconds = (performance.now() - loopStarted) / 1000;
      await verifier.close();
      result.inProcessLoop = { wallSeconds: round(loopSeconds), turns: loop.turns, cpuSeconds: roundAll(loopCpu.read()) };
      result.loopWallSeconds = loopSeconds;
    }

    const meter = new CpuMeter({
      ...Object.fromEntries(cpu.map((worker, i) => [`cpuWorker${cpuWorkers > 1 ? i + 1 : ''}`, () => treeCpuSeconds(worker.pid)])),
      gpuWorker: () => treeCpuSeconds(gpu.pid),
      temporalServer: () => treeCpuSeconds(temporalServer.pid!),
      postgres: () => treeCpuSeconds(pgPid),
      policy: () => treeCpuSeconds(policy.pid),
      client: () => processCpuSeconds(),
    });
    const pass = await runRatchetPass(client, requests, flags['wait-on'] === 'results' ? 'results' : { pool });
    const cpuSeconds = meter.read();
    const ratchetCpu = Object.entries(cpuSeconds).filter(([key]) => !['policy', 'client'].includes(key)).reduce((sum, [, s]) => sum + s, 0);
    const history = await historySize(client, requests.slice(0, 8).map((r) => r.trajectoryId));
    Object.assign(result, {
      completed: pass.completed, failed: pass.failed, turnsRun: pass.turns,
      wallSeconds: round(pass.wallSeconds),
      trajectoriesPerSecond: round(pass.completed / pass.wallSeconds),
      turnsPerSecond: round(pass.turns / pass.wallSeconds),
      cpuSeconds: roundAll(cpuSeconds),
      cpuMsPerTrajectory: msEach(cpuSeconds, pass.completed),
      // Workers, Temporal server and Postgres: what Ratchet costs. The policy stands in for the GPU; the client is the trainer.
      ratchetCpuMsPerTurn: round((ratchetCpu * 1000) / pass.turns),
      historyEventsPerTrajectory: history.events, historyBytesPerTrajectory: history.bytes,
    });
    if (withLoop) {
      result.overheadRatio = +(pass.wallSeconds / (result.loopWallSeconds as number)).toFixed(3);
      delete result.loopWallSeconds;
    }
    return result;
  } finally {
    for (const child of started.reverse()) await child.stop();
  }
}

/**
 * Temporal's floor: the trajectory's shape with no work in it, on the same server. No Ratchet, Postgres or policy:
 * what is left is what the server and the SDK cost for one trajectory's tasks and events.
 */
async function floorPhase(): Promise<Record<string, unknown>> {
  let meter: CpuMeter | undefined;
  const pass = await runFloorPass(client, temporalServer.address, trajectories, turns, () => {
    meter = new CpuMeter({ temporalServer: () => treeCpuSeconds(temporalServer.pid!), sdkWorkersAndClient: () => processCpuSeconds() });
  });
  const cpuSeconds = meter!.read();
  return {
    phase: 'floor', workflows: pass.workflows, turns, wallSeconds: round(pass.wallSeconds),
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

try {
  for (const name of flags.phases.split(',')) {
    if (name === 'floor') {
      console.log(JSON.stringify(await floorPhase(), null, 2));
      continue;
    }
    // Served as a tuned SGLang deployment would be: incremental streaming, a chunk every 16 decode steps.
    const stream = ['--incremental-streaming-output', '--chunk-tokens', '16'];
    const policyFlags = name === 'instant'
      ? ['--tokens-per-second', '1000000000', ...stream]
      : ['--tokens-per-second', flags['decode-tokens-per-second'], '--reasoning-tokens', flags['turn-tokens'], ...stream];
    console.log(JSON.stringify(await phase(name, policyFlags, name !== 'instant'), null, 2));
  }
} finally {
  await pool.end();
  await connection.close();
  await postgres.stop();
  await temporalServer.stop();
  await rm(stateDir, { recursive: true, force: true });
}

// The GPU worker against the simulated policy at a realistic decode speed, on the real stack (Temporal dev
// server + Postgres; the CPU worker in this process, GPU workers as separate `ratchet worker gpu` processes):
//   1. slot utilisation: requests kept in flight against the worker's slot count, time to fill, throughput;
//   2. heartbeat overhead per turn: encoding cost and bytes of the partial output, modelled per turn, and an
//      end-to-end run at a 500 ms vs 10 s heartbeat interval;
//   3. tokens lost when a GPU worker is SIGKILLed mid-generation, counted by the server (goal: at most one
//      heartbeat interval's worth, plus one streamed chunk).
// Needs `dist/` (`npx tsc -p tsconfig.json`). `npm run bench:gpu-worker`; prints lines, then one JSON object.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import '../src/stack/tool-logging.js';
import { decodePartialOutput, encodePartialOutput } from '../src/activities/releases/token-heartbeats.js';
import type { GenerateResult } from '../src/activities/generate.js';
import type { PartialOutput } from '../src/policy/resumable-generation.js';
import { NO_FAULTS } from '../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy, type SimulatedPolicyStats } from '../src/policy/simulated/server.js';
import { runRollouts } from '../src/client/run-rollouts.js';
import { submitTrajectory, trajectoryRequests } from '../src/client/submit.js';
import { stopProcess } from '../src/stack/child-process.js';
import { untilPolling } from '../src/stack/worker-pollers.js';
import { pollUntil } from '../src/timing/poll-until.js';
import type { TrajectoryRequest, TrajectoryResult } from '../src/workflows/trajectory-state.js';
import { startSimulatedStack, type SimulatedStack } from '../src/stack/simulated-stack.js';

const CLI = path.resolve(import.meta.dirname, '../dist/cli/main.js');
const CHUNK_TOKENS = DEFAULT_SIMULATED_POLICY.chunkTokens ?? 8;
/** The workflow's default generate heartbeat timeout; the activity heartbeats every min(interval, timeout / 3). */
const DEFAULT_HEARTBEAT_TIMEOUT_MS = 20_000;
const WHOLE_RUN_LIMIT_MS = 235_000;

// Part 1: ~600-token answers at 300 tokens/s per request (a turn streams ~2 s), 8 slots, 32 × 2 turns.
const SLOTS = 8;
const P1 = { tokensPerSecond: 300, reasoningTokens: 600, trajectories: 32, turns: 2, sampleMs: 25, limitMs: 90_000 };
// Part 2: the heartbeat model, and the same small run at two intervals.
const P2 = {
  sizes: [1024, 4096, 16_384],
  intervalsMs: [2000, 500],
  e2eIntervalsMs: [500, 10_000],
  e2eTrajectories: 8,
  e2eTurns: 2,
  e2eRounds: 2,
  limitMs: 45_000,
};
const TURN_SCENARIOS = [
  { name: '16K tokens at 60 tok/s (long reasoning turn)', tokens: 16_384, tokensPerSecond: 60 },
  { name: '600 tokens at 300 tok/s (part 1 turn)', tokens: 600, tokensPerSecond: 300 },
];
// Part 3: ~1500-token answers at 100 tokens/s, heartbeats every 500 ms, a dead worker noticed after 3 s.
const P3 = {
  tokensPerSecond: 100,
  reasoningTokens: 1500,
  heartbeatMs: 500,
  heartbeatTimeoutS: 3,
  killAtTokens: 400,
  repeats: 3,
  turns: 2,
  limitMs: 75_000,
};

const scriptStart = performance.now();
const children = new Set<ChildProcess>();
const policies = new Set<RunningSimulatedPolicy>();
let stack: SimulatedStack | undefined;
let stopCpuWorker: (() => Promise<void>) | undefined;
let stopping = false;

const log = (line = '') => process.stdout.write(`${line}\n`);
const round = (value: number, digits = 2) => +value.toFixed(digits);

// ---------------------------------------------------------------------------------------------------------
// Processes and waiting

interface GpuWorkerProcess {
  child: ChildProcess;
  stderr: () => string;
  spawnedAt: number;
}

/** A GPU worker in its own process (built CLI), like a GPU host: it can be SIGKILLed. */
function spawnGpuWorker(env: { policyUrl: string; slots: number; heartbeatMs: number }): GpuWorkerProcess {
  if (stopping) throw new Error('stopping');
  let stderr = '';
  const child = spawn(process.execPath, [CLI, 'worker', 'gpu'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack!.temporalAddress,
      DATABASE_URL: stack!.databaseUrl,
      RATCHET_POLICY_URL: env.policyUrl,
      RATCHET_GPU_SLOTS: String(env.slots),
      RATCHET_HEARTBEAT_INTERVAL_MS: String(env.heartbeatMs),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (data: Buffer) => {
    stderr = (stderr + data.toString()).slice(-4000);
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return { child, stderr: () => stderr.trim(), spawnedAt: performance.now() };
}

/** Waits until Temporal lists this process (`pid@host`, the SDK's default identity) as a poller of the GPU queue. */
async function waitForPoller(client: Client, worker: GpuWorkerProcess, timeoutMs = 30_000): Promise<number> {
  await untilPolling(client, worker.child.pid!, 'gpu', {
    timeoutMs,
    intervalMs: 100,
    abortIf: () => {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) {
        throw new Error(`GPU worker exited (${worker.child.exitCode ?? worker.child.signalCode}) before polling: ${worker.stderr()}`);
      }
    },
  });
  return performance.now() - worker.spawnedAt;
}

function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 20): Promise<boolean> {
  return pollUntil(condition, { what, timeoutMs, intervalMs: everyMs, fatal: () => true });
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The policy's counters; `stats()` is a cheap snapshot (token arrays are shared, not copied). */
function counters(policy: RunningSimulatedPolicy): SimulatedPolicyStats {
  return policy.stats();
}

async function startPolicy(config: Partial<SimulatedPolicyConfig>): Promise<RunningSimulatedPolicy> {
  if (stopping) throw new Error('stopping');
  const policy = await startSimulatedPolicy(stack!.tokenizer, new AnswerBook(stack!.problems), {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    ...config,
  });
  policies.add(policy);
  return policy;
}

async function closePolicy(policy: RunningSimulatedPolicy): Promise<void> {
  policies.delete(policy);
  await policy.close();
}

async function cleanup(): Promise<void> {
  // A client call still retrying when its connection closes throws from a grpc-js timer; finish cleaning up anyway.
  if (!stopping) {
    let seen = 0;
    process.on('uncaughtException', (error) => {
      if (seen++ === 0) log(`  (while stopping: ${error.message})`);
    });
  }
  stopping = true;
  for (const child of [...children]) await stopProcess(child, 3_000).catch(() => child.kill('SIGKILL'));
  for (const policy of [...policies]) await closePolicy(policy).catch(() => undefined);
  await stopCpuWorker?.().catch(() => undefined);
  stopCpuWorker = undefined;
  await stack?.stop().catch(() => undefined);
  stack = undefined;
}

// ---------------------------------------------------------------------------------------------------------
// History: the generate activities of one trajectory

interface GenerateAttempt {
  turn: number;
  attempt: number;
  startedMs: number;
  endedMs: number;
  result?: GenerateResult;
  failed: boolean;
}

function timestampMs(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  if (!ts) return Number.NaN;
  const seconds = ts.seconds as number | { toNumber(): number } | null | undefined;
  return (typeof seconds === 'number' ? seconds : (seconds?.toNumber() ?? 0)) * 1000 + (ts.nanos ?? 0) / 1e6;
}

/** Generate attempts from the history: the started event carries the attempt's start time and number. */
async function generateAttempts(client: Client, trajectoryId: string): Promise<GenerateAttempt[]> {
  const history = await client.workflow.getHandle(trajectoryId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, number>();
  const started = new Map<string, { attempt: number; at: number }>();
  const attempts: GenerateAttempt[] = [];
  let generateTurn = 0;
  for (const event of events) {
    const id = String(event.eventId);
    const at = timestampMs(event.eventTime);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'generate') {
      scheduled.set(id, generateTurn++);
    } else if (event.activityTaskStartedEventAttributes) {
      const attributes = event.activityTaskStartedEventAttributes;
      started.set(String(attributes.scheduledEventId), { attempt: attributes.attempt ?? 1, at });
    } else if (event.activityTaskCompletedEventAttributes || event.activityTaskTimedOutEventAttributes || event.activityTaskFailedEventAttributes) {
      const attributes =
        event.activityTaskCompletedEventAttributes ?? event.activityTaskTimedOutEventAttributes ?? event.activityTaskFailedEventAttributes!;
      const key = String(attributes.scheduledEventId);
      const turn = scheduled.get(key);
      if (turn === undefined) continue;
      const start = started.get(key);
      const payload = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0] as Payload | undefined;
      attempts.push({
        turn,
        attempt: start?.attempt ?? 1,
        startedMs: start?.at ?? Number.NaN,
        endedMs: at,
        result: payload ? defaultPayloadConverter.fromPayload<GenerateResult>(payload) : undefined,
        failed: !payload,
      });
    }
  }
  return attempts;
}

// ---------------------------------------------------------------------------------------------------------
// Part 2a: heartbeat encoding microbenchmark (runs first, on a quiet machine, before the stack starts)

function syntheticOutput(tokens: number): PartialOutput {
  const ids = Array.from({ length: tokens }, (_, i) => (i * 7919) % 151_643);
  const logprobs = Array.from({ length: tokens }, (_, i) => -((i * 0.618) % 1) * 0.8);
  const versions = Array.from({ length: tokens }, () => 3);
  return { ids, logprobs, versions };
}

/** Mean µs per call: warm up, then run until `minMs` has passed (at least `minIterations`). */
function timeIt(fn: () => unknown, minMs = 250, minIterations = 20): { us: number; iterations: number } {
  for (let i = 0; i < 10; i++) fn();
  let iterations = 0;
  const start = performance.now();
  let elapsed = 0;
  while (iterations < minIterations || elapsed < minMs) {
    fn();
    iterations += 1;
    elapsed = performance.now() - start;
  }
  return { us: (elapsed * 1000) / iterations, iterations };
}

interface EncodingPoint {
  tokens: number;
  encodeUs: number;
  encodeAndPayloadUs: number;
  decodeUs: number;
  payloadBytes: number;
  bytesPerToken: number;
  iterations: number;
}

function encodingMicrobenchmark(): {
  points: EncodingPoint[];
  fit: { fixedUs: number; perTokenUs: number; fixedBytes: number; bytesPerToken: number };
} {
  const points = P2.sizes.map((tokens): EncodingPoint => {
    const output = syntheticOutput(tokens);
    const encoded = encodePartialOutput(output);
    const encode = timeIt(() => encodePartialOutput(output));
    // What `Context.heartbeat(details)` costs the activity: the encoding, then the SDK's JSON payload conversion.
    const withPayload = timeIt(() => defaultPayloadConverter.toPayload(encodePartialOutput(output)));
    const decode = timeIt(() => decodePartialOutput(encoded));
    const payload = defaultPayloadConverter.toPayload(encoded);
    const payloadBytes = (payload.data?.length ?? 0) + Object.values(payload.metadata ?? {}).reduce((sum, v) => sum + v.length, 0);
    return {
      tokens,
      encodeUs: round(encode.us, 1),
      encodeAndPayloadUs: round(withPayload.us, 1),
      decodeUs: round(decode.us, 1),
      payloadBytes,
      bytesPerToken: round(payloadBytes / tokens, 2),
      iterations: encode.iterations,
    };
  });
  // Least-squares line through (tokens, µs) and (tokens, bytes): cost of a heartbeat carrying n tokens.
  const line = (ys: number[]) => {
    const xs = points.map((p) => p.tokens);
    const mx = xs.reduce((a, b) => a + b) / xs.length;
    const my = ys.reduce((a, b) => a + b) / ys.length;
    const slope = xs.reduce((s, x, i) => s + (x - mx) * (ys[i]! - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0);
    return { slope, intercept: my - slope * mx };
  };
  const us = line(points.map((p) => p.encodeAndPayloadUs));
  const bytes = line(points.map((p) => p.payloadBytes));
  return {
    points,
    fit: { fixedUs: Math.max(0, us.intercept), perTokenUs: us.slope, fixedBytes: Math.max(0, bytes.intercept), bytesPerToken: bytes.slope },
  };
}

/** One turn's heartbeats: every `min(interval, timeout / 3)`, each carrying every token so far. */
function heartbeatModel(fit: ReturnType<typeof encodingMicrobenchmark>['fit'], tokens: number, tokensPerSecond: number, intervalMs: number) {
  const turnMs = (tokens / tokensPerSecond) * 1000;
  const everyMs = Math.max(50, Math.min(intervalMs, Math.floor(DEFAULT_HEARTBEAT_TIMEOUT_MS / 3)));
  const beats = Math.floor(turnMs / everyMs);
  let cpuUs = fit.fixedUs; // the re-announce at the start of every attempt (empty output)
  let bytes = fit.fixedBytes;
  for (let i = 1; i <= beats; i++) {
    const carried = Math.min(tokens, Math.round((i * everyMs * tokensPerSecond) / 1000));
    cpuUs += fit.fixedUs + fit.perTokenUs * carried;
    bytes += fit.fixedBytes + fit.bytesPerToken * carried;
  }
  return {
    intervalMs,
    effectiveEveryMs: everyMs,
    turnSeconds: round(turnMs / 1000, 1),
    heartbeatsPerTurn: beats + 1,
    cpuMsPerTurn: round(cpuUs / 1000, 2),
    percentOfTurn: round((cpuUs / 1000 / turnMs) * 100, 4),
    lastHeartbeatKB: round((fit.fixedBytes + fit.bytesPerToken * tokens) / 1024, 1),
    mbToTemporalPerTurn: round(bytes / 1e6, 2),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Part 1: slot utilisation

interface Sample {
  t: number;
  inFlight: number;
  requests: number;
  completed: number;
  generatedTokens: number;
}

async function slotUtilisation() {
  const { client, problems, policy } = stack!;
  const worker = spawnGpuWorker({ policyUrl: policy.url, slots: SLOTS, heartbeatMs: 2000 });
  try {
    const pollingMs = await waitForPoller(client, worker);
    log(`  GPU worker process (${SLOTS} slots) polling ${round(pollingMs / 1000)} s after spawn; warming up`);
    await withTimeout(runRollouts(client, trajectoryRequests(`gpu-warmup-${Date.now()}`, problems.slice(0, 2), 1, { turns: 1 })), 30_000, 'warm-up');

    const base = counters(policy);
    const totalTurns = P1.trajectories * P1.turns;
    const samples: Sample[] = [];
    let samplerUs = 0;
    const start = performance.now();
    const sample = () => {
      const before = performance.now();
      const s = counters(policy);
      samplerUs += (performance.now() - before) * 1000;
      samples.push({
        t: before - start,
        inFlight: s.inFlight,
        requests: s.requests - base.requests,
        completed: s.completed - base.completed,
        generatedTokens: s.generatedTokens - base.generatedTokens,
      });
    };
    const sampler = setInterval(sample, P1.sampleMs);
    const requests = trajectoryRequests(`gpu-slots-${Date.now()}`, problems, 1, { turns: P1.turns, maxNewTokens: 2048 }).slice(0, P1.trajectories);
    let results: TrajectoryResult[];
    try {
      results = await withTimeout(runRollouts(client, requests), P1.limitMs, 'slot utilisation run');
    } finally {
      clearInterval(sampler);
      sample();
    }
    const wallS = (performance.now() - start) / 1000;

    const first = samples.find((s) => s.requests > 0);
    const last = samples.find((s) => s.completed >= totalTurns) ?? samples[samples.length - 1]!;
    if (!first) throw new Error('no request reached the policy');
    const window = samples.filter((s) => s.t >= first.t && s.t <= last.t);
    const full = window.find((s) => s.inFlight >= SLOTS);
    const allStarted = window.find((s) => s.requests >= totalTurns) ?? last;
    const steady = full ? window.filter((s) => s.t >= full.t && s.t <= allStarted.t) : [];
    const windowS = (last.t - first.t) / 1000;
    const util = (xs: Sample[]) => (xs.length === 0 ? null : round(xs.reduce((sum, s) => sum + s.inFlight, 0) / xs.length / SLOTS, 3));
    const sorted = window.map((s) => s.inFlight).sort((a, b) => a - b);
    const final = counters(policy);
    const turnsDone = results.reduce((sum, r) => sum + r.turns.length, 0);
    const kept = results.reduce((sum, r) => sum + r.outputTokens, 0);
    const generated = final.generatedTokens - base.generatedTokens;
    return {
      slots: SLOTS,
      tokensPerSecondPerRequest: P1.tokensPerSecond,
      reasoningTokens: P1.reasoningTokens,
      trajectories: P1.trajectories,
      turns: P1.turns,
      completed: results.filter((r) => r.status === 'completed').length,
      turnsDone,
      meanOutputTokens: round(kept / Math.max(1, turnsDone), 0),
      samples: window.length,
      sampleEveryMs: P1.sampleMs,
      sampleUs: round(samplerUs / samples.length, 1),
      windowSeconds: round(windowS),
      wallSeconds: round(wallS),
      meanUtilisation: util(window),
      p50Utilisation: round((sorted[Math.floor(sorted.length / 2)] ?? 0) / SLOTS, 3),
      maxInFlight: sorted[sorted.length - 1] ?? 0,
      fullFraction: round(window.filter((s) => s.inFlight >= SLOTS).length / Math.max(1, window.length), 3),
      steadyUtilisation: util(steady),
      steadySeconds: full ? round((allStarted.t - full.t) / 1000) : null,
      timeToFillSeconds: full ? round((full.t - first.t) / 1000) : null,
      serverTokensPerSecond: round(generated / windowS, 0),
      idealTokensPerSecond: SLOTS * P1.tokensPerSecond,
      // What one request actually streamed at: the server's pace under this machine's load, against the configured speed.
      tokensPerSecondPerBusySlot: round(generated / windowS / Math.max(1e-9, (util(window) ?? 0) * SLOTS), 0),
      turnsPerSecond: round(turnsDone / windowS),
      serverTokens: generated,
      keptTokens: kept,
      requests: final.requests - base.requests,
    };
  } finally {
    await stopProcess(worker.child, 5_000);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Part 2b: the same small run at two heartbeat intervals

async function heartbeatEndToEnd(intervalMs: number, roundIndex: number) {
  const { client, problems } = stack!;
  const policy = await startPolicy({ tokensPerSecond: P1.tokensPerSecond, reasoningTokens: P1.reasoningTokens, seed: 2 });
  const worker = spawnGpuWorker({ policyUrl: policy.url, slots: SLOTS, heartbeatMs: intervalMs });
  try {
    await waitForPoller(client, worker);
    // A 60 s heartbeat timeout so a 10 s interval is not clamped to timeout / 3 (20 s default → 6.7 s).
    const requests = trajectoryRequests(`gpu-hb${intervalMs}-${roundIndex}-${Date.now()}`, problems.slice(0, P2.e2eTrajectories), 1, {
      turns: P2.e2eTurns,
      maxNewTokens: 2048,
    }).map((r): TrajectoryRequest => ({ ...r, timeouts: { generateHeartbeatSeconds: 60 } }));
    const start = performance.now();
    const results = await withTimeout(runRollouts(client, requests), P2.limitMs, `heartbeat ${intervalMs} ms run`);
    const wallS = (performance.now() - start) / 1000;
    const attempts = (await Promise.all(requests.map((r) => generateAttempts(client, r.trajectoryId)))).flat().filter((a) => a.result);
    // Activity time beyond the decode time the simulated server paces itself at.
    const decodeMs = attempts.map((a) => (a.result!.outputLen / P1.tokensPerSecond) * 1000);
    const overheads = attempts.map((a, i) => a.endedMs - a.startedMs - decodeMs[i]!);
    const durations = attempts.map((a) => a.endedMs - a.startedMs);
    const stats = counters(policy);
    const kept = results.reduce((sum, r) => sum + r.outputTokens, 0);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return {
      intervalMs,
      round: roundIndex + 1,
      turns: attempts.length,
      overheadsMs: overheads,
      decodeMs,
      completed: results.filter((r) => r.status === 'completed').length,
      wallSeconds: round(wallS),
      meanGenerateMs: round(mean(durations), 0),
      meanOverheadMsPerTurn: round(mean(overheads), 0),
      p50OverheadMsPerTurn: round([...overheads].sort((a, b) => a - b)[Math.floor(overheads.length / 2)] ?? 0, 0),
      meanOutputTokens: round(kept / Math.max(1, attempts.length), 0),
      serverTokens: stats.generatedTokens,
      keptTokens: kept,
    };
  } finally {
    await stopProcess(worker.child, 5_000);
    await closePolicy(policy);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Part 3: tokens lost when a GPU worker is killed mid-generation

/**
 * Where repeat r kills: 400 tokens plus r/3 of an interval's tokens. Heartbeats fall every interval from the
 * attempt's start, so a fixed threshold at a multiple of interval × speed (400 = 8 × 50) would always kill just
 * after a heartbeat and show the best case; spreading the phase shows the worst case too.
 */
function killThreshold(repeat: number): number {
  const perInterval = (P3.tokensPerSecond * P3.heartbeatMs) / 1000;
  return P3.killAtTokens + Math.round(((repeat % 3) / 3) * perInterval);
}

async function killRepeat(repeat: number) {
  const { client, problems } = stack!;
  const policy = await startPolicy({ tokensPerSecond: P3.tokensPerSecond, reasoningTokens: P3.reasoningTokens, seed: 10 + repeat });
  let first: GpuWorkerProcess | undefined;
  try {
    first = spawnGpuWorker({ policyUrl: policy.url, slots: SLOTS, heartbeatMs: P3.heartbeatMs });
    await waitForPoller(client, first);
    const [request] = trajectoryRequests(`gpu-kill-${Date.now()}`, problems.slice(repeat, repeat + 1), 1, { turns: P3.turns, maxNewTokens: 4096 });
    const { handle } = await submitTrajectory(client, { ...request!, timeouts: { generateHeartbeatSeconds: P3.heartbeatTimeoutS } });
    const submitted = performance.now();

    const killAt = killThreshold(repeat);
    await until(() => counters(policy).generatedTokens >= killAt, 30_000, `${killAt} tokens sent`, 5);
    const seenAtKill = counters(policy).generatedTokens;
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await new Promise((resolve) =>
      first!.child.exitCode !== null || first!.child.signalCode !== null ? resolve(undefined) : first!.child.once('exit', resolve),
    );
    const replacement = spawnGpuWorker({ policyUrl: policy.url, slots: SLOTS, heartbeatMs: P3.heartbeatMs });
    try {
      const replacementPollingMs = await waitForPoller(client, replacement);
      const result = await withTimeout(handle.result(), P3.limitMs, 'killed trajectory');
      const wallS = (performance.now() - submitted) / 1000;
      const stats = counters(policy);
      const attempts = await generateAttempts(client, request!.trajectoryId);
      const retried = attempts.find((a) => a.turn === 0 && a.attempt > 1 && a.result);
      const kept = result.turns.reduce((sum, turn) => sum + turn.outputLen, 0);
      const generatedTwice = stats.generatedTokens - kept;
      const bound = (P3.tokensPerSecond * P3.heartbeatMs) / 1000 + CHUNK_TOKENS;
      return {
        repeat: repeat + 1,
        status: result.status,
        turns: result.turns.length,
        wallSeconds: round(wallS),
        killThreshold: killAt,
        tokensSentAtKill: seenAtKill,
        resumedTokens: retried?.result?.resumedTokens ?? 0,
        turn0Attempts: Math.max(0, ...attempts.filter((a) => a.turn === 0).map((a) => a.attempt)),
        replacementPollingSeconds: round(replacementPollingMs / 1000),
        killToResumeSeconds: retried ? round((retried.startedMs - killedAt) / 1000) : null,
        serverRequests: stats.requests,
        serverTokens: stats.generatedTokens,
        keptTokens: kept,
        generatedTwice,
        boundTokens: bound,
        withinBound: generatedTwice >= 0 && generatedTwice <= bound,
        turnOutputLens: result.turns.map((turn) => turn.outputLen),
      };
    } finally {
      await stopProcess(replacement.child, 5_000);
    }
  } finally {
    // Not left polling when this repeat failed before its kill: it would take the next repeat's turns.
    if (first) await stopProcess(first.child, 5_000);
    await closePolicy(policy);
  }
}

// ---------------------------------------------------------------------------------------------------------

async function part<T>(name: string, run: () => Promise<T>): Promise<T | { error: string }> {
  const start = performance.now();
  try {
    const value = await run();
    log(`  (${name}: ${round((performance.now() - start) / 1000, 1)} s)`);
    return value;
  } catch (error) {
    log(`  ${name} FAILED: ${(error as Error).message}`);
    return { error: (error as Error).message };
  }
}

async function main(): Promise<number> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -p tsconfig.json)`);
  log(`GPU worker benchmark: simulated policy, real Temporal dev server + Postgres; ${os.cpus().length} cores, node ${process.version}`);

  log('\n[2a] Heartbeat encoding (microbenchmark, before the stack starts)');
  const encoding = encodingMicrobenchmark();
  for (const p of encoding.points) {
    log(
      `  ${String(p.tokens).padStart(6)} tokens: encode ${p.encodeUs} µs, +payload conversion ${p.encodeAndPayloadUs} µs, decode ${p.decodeUs} µs; ` +
        `${(p.payloadBytes / 1024).toFixed(1)} KB per heartbeat (${p.bytesPerToken} B/token)`,
    );
  }
  const models = TURN_SCENARIOS.flatMap((scenario) =>
    P2.intervalsMs.map((interval) => ({
      scenario: scenario.name,
      tokens: scenario.tokens,
      tokensPerSecond: scenario.tokensPerSecond,
      ...heartbeatModel(encoding.fit, scenario.tokens, scenario.tokensPerSecond, interval),
    })),
  );
  for (const m of models) {
    log(
      `  ${m.scenario}, interval ${m.intervalMs} ms: ${m.heartbeatsPerTurn} heartbeats over ${m.turnSeconds} s, ` +
        `${m.cpuMsPerTurn} CPU ms per turn (${m.percentOfTurn}% of the turn), last heartbeat ${m.lastHeartbeatKB} KB, ${m.mbToTemporalPerTurn} MB to Temporal per turn`,
    );
  }

  log('\nStarting the stack (Temporal dev server, Postgres, CPU worker in this process)');
  stack = await startSimulatedStack({ tokensPerSecond: P1.tokensPerSecond, reasoningTokens: P1.reasoningTokens, seed: 1 });
  stopCpuWorker = await stack.startWorkers({ gpu: false });
  log(`  ready after ${round((performance.now() - scriptStart) / 1000, 1)} s`);

  log(
    `\n[1] Slot utilisation: ${P1.trajectories} trajectories × ${P1.turns} turns, ${SLOTS} slots, ${P1.tokensPerSecond} tok/s per request, ~${P1.reasoningTokens}-token answers`,
  );
  const slots = await part('part 1', slotUtilisation);
  if (!('error' in slots)) {
    log(
      `  in flight / slots: mean ${slots.meanUtilisation}, p50 ${slots.p50Utilisation}, max ${slots.maxInFlight}/${SLOTS}, all slots busy ${round(slots.fullFraction * 100, 1)}% of the time ` +
        `(${slots.samples} samples every ${slots.sampleEveryMs} ms over ${slots.windowSeconds} s, first request → last completion)`,
    );
    log(
      `  while turns were still waiting to start (${slots.steadySeconds} s): mean ${slots.steadyUtilisation}; time to fill all ${SLOTS} slots: ${slots.timeToFillSeconds} s`,
    );
    log(
      `  throughput: ${slots.serverTokensPerSecond} tokens/s server side (ideal ${slots.idealTokensPerSecond} = ${SLOTS} × ${P1.tokensPerSecond}), ${slots.turnsPerSecond} turns/s; ` +
        `${slots.completed}/${P1.trajectories} completed, ${slots.meanOutputTokens} tokens per turn, server sent ${slots.serverTokens} for ${slots.keptTokens} kept`,
    );
    log(
      `  each busy slot streamed at ${slots.tokensPerSecondPerBusySlot} tok/s (configured ${P1.tokensPerSecond}); sampling cost ${slots.sampleUs} µs a sample`,
    );
  }

  log(`\n[2b] Heartbeat interval end to end: ${P2.e2eTrajectories} trajectories × ${P2.e2eTurns} turns, ${SLOTS} slots, ${P1.tokensPerSecond} tok/s`);
  // Rounds in ABBA order (500, 10 s, 10 s, 500) so drift in the machine's load and warm-up hit both intervals alike.
  const endToEnd: Awaited<ReturnType<typeof part<Awaited<ReturnType<typeof heartbeatEndToEnd>>>>>[] = [];
  for (let r = 0; r < P2.e2eRounds; r++) {
    for (const interval of r % 2 === 0 ? P2.e2eIntervalsMs : [...P2.e2eIntervalsMs].reverse()) {
      const run = await part(`interval ${interval} ms, round ${r + 1}`, () => heartbeatEndToEnd(interval, r));
      endToEnd.push(run);
      if (!('error' in run)) {
        log(
          `  interval ${String(interval).padStart(5)} ms, round ${r + 1}: wall ${run.wallSeconds} s, generate activity ${run.meanGenerateMs} ms per turn for ${run.meanOutputTokens} tokens, ` +
            `beyond decode time: mean ${run.meanOverheadMsPerTurn} ms, p50 ${run.p50OverheadMsPerTurn} ms`,
        );
      }
    }
  }
  const byInterval = P2.e2eIntervalsMs.map((intervalMs) => {
    const runs = endToEnd.filter((r): r is Exclude<typeof r, { error: string }> => !('error' in r) && r.intervalMs === intervalMs);
    const overheads = runs.flatMap((r) => r.overheadsMs).sort((a, b) => a - b);
    const decodeMs = runs.flatMap((r) => r.decodeMs).reduce((a, b) => a + b, 0);
    return {
      intervalMs,
      turns: overheads.length,
      overheadPercentOfDecode: decodeMs > 0 ? round((overheads.reduce((a, b) => a + b, 0) / decodeMs) * 100, 1) : null,
      meanOverheadMsPerTurn: overheads.length ? round(overheads.reduce((a, b) => a + b, 0) / overheads.length, 0) : null,
      p50OverheadMsPerTurn: overheads.length ? round(overheads[Math.floor(overheads.length / 2)]!, 0) : null,
      meanWallSeconds: runs.length ? round(runs.reduce((a, r) => a + r.wallSeconds, 0) / runs.length) : null,
    };
  });
  const [fast, slow] = byInterval;
  const overheadDifferenceMs =
    fast?.meanOverheadMsPerTurn != null && slow?.meanOverheadMsPerTurn != null ? fast.meanOverheadMsPerTurn - slow.meanOverheadMsPerTurn : null;
  const p50DifferenceMs =
    fast?.p50OverheadMsPerTurn != null && slow?.p50OverheadMsPerTurn != null ? fast.p50OverheadMsPerTurn - slow.p50OverheadMsPerTurn : null;
  for (const b of byInterval) {
    log(
      `  interval ${String(b.intervalMs).padStart(5)} ms, ${b.turns} turns: beyond decode time mean ${b.meanOverheadMsPerTurn} ms, p50 ${b.p50OverheadMsPerTurn} ms ` +
        `(${b.overheadPercentOfDecode}% of decode time); wall ${b.meanWallSeconds} s a run`,
    );
  }
  log(`  turn wall time, 500 ms − 10 s: mean ${overheadDifferenceMs} ms, p50 ${p50DifferenceMs} ms per turn`);

  log(
    `\n[3] Tokens lost on a kill: ${P3.turns}-turn trajectory, ~${P3.reasoningTokens}-token answers at ${P3.tokensPerSecond} tok/s, heartbeat every ${P3.heartbeatMs} ms, ` +
      `timeout ${P3.heartbeatTimeoutS} s; SIGKILL at ≥ ${P3.killAtTokens} tokens sent ` +
      `(+0, +1/3, +2/3 of an interval's tokens, to vary the phase against the heartbeats), then a replacement worker`,
  );
  const kills = [];
  for (let repeat = 0; repeat < P3.repeats; repeat++) {
    const run = await part(`repeat ${repeat + 1}`, () => killRepeat(repeat));
    kills.push(run);
    if (!('error' in run)) {
      log(
        `  repeat ${run.repeat}: killed at ${run.tokensSentAtKill} tokens sent (threshold ${run.killThreshold}), resumed from ${run.resumedTokens} (attempt ${run.turn0Attempts}, ` +
          `${run.killToResumeSeconds} s after the kill; replacement polling after ${run.replacementPollingSeconds} s); ` +
          `server sent ${run.serverTokens}, trajectory kept ${run.keptTokens} ${JSON.stringify(run.turnOutputLens)} → generated twice ${run.generatedTwice} ` +
          `(goal ≤ ${run.boundTokens}: ${run.withinBound ? 'met' : 'MISSED'})`,
      );
    }
  }
  const okKills = kills.filter((k): k is Exclude<typeof k, { error: string }> => !('error' in k));
  const maxTwice = okKills.length ? Math.max(...okKills.map((k) => k.generatedTwice)) : null;
  const bound = (P3.tokensPerSecond * P3.heartbeatMs) / 1000 + CHUNK_TOKENS;
  log(
    `  max generated twice: ${maxTwice} tokens; goal ≤ ${bound} (${P3.tokensPerSecond} tok/s × ${P3.heartbeatMs} ms + one ${CHUNK_TOKENS}-token chunk)`,
  );

  const totalSeconds = round((performance.now() - scriptStart) / 1000, 1);
  log(`\nTotal ${totalSeconds} s`);
  const failed = [slots, ...endToEnd, ...kills].some((r) => 'error' in r) || okKills.some((k) => !k.withinBound);
  log(
    JSON.stringify(
      {
        machine: { cores: os.cpus().length, node: process.version },
        totalSeconds,
        slotUtilisation: slots,
        heartbeatOverhead: {
          encoding: encoding.points,
          fit: encoding.fit,
          perTurn: models,
          endToEnd: endToEnd.map((r) => ('error' in r ? r : { ...r, overheadsMs: undefined, decodeMs: undefined })),
          byInterval,
          overheadDifferenceMs,
          p50DifferenceMs,
        },
        killedWorker: {
          tokensPerSecond: P3.tokensPerSecond,
          heartbeatMs: P3.heartbeatMs,
          heartbeatTimeoutSeconds: P3.heartbeatTimeoutS,
          killAtTokens: P3.killAtTokens,
          boundTokens: bound,
          maxGeneratedTwice: maxTwice,
          allWithinBound: okKills.length === P3.repeats && okKills.every((k) => k.withinBound),
          repeats: kills,
        },
      },
      null,
      2,
    ),
  );
  return failed ? 1 : 0;
}

let exitCode = 1;
const watchdog = setTimeout(() => {
  log(`\nbench-gpu-worker: over ${WHOLE_RUN_LIMIT_MS / 1000} s, stopping`);
  void cleanup().finally(() => process.exit(2));
}, WHOLE_RUN_LIMIT_MS);
watchdog.unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\nbench-gpu-worker: ${signal}, stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}
try {
  exitCode = await main();
} catch (error) {
  log(`bench-gpu-worker failed: ${(error as Error).stack ?? String(error)}`);
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
process.exit(exitCode);

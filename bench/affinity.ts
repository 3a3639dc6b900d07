// Turn affinity (issue 27) on the real stack: a Temporal dev server, Postgres, a CPU worker, and N simulated
// inference servers, each with a prefix cache, a prefill speed and a GPU worker of its own (its own task queue).
// The same workload runs twice: every turn on the shared GPU queue (`turnAffinity: false`), then each turn after the
// first sent to the server of the turn before (the default). Each server reports every request it served (its
// rid names the trajectory and turn), so the numbers are exact: which server served each turn, its cached tokens,
// how long it held the server.
//   npm run bench:affinity -- [--trajectories 128] [--servers 4] [--slots 8] [--turns 5] [--decode 500]
//                             [--prefill 4000] [--reasoning 1000] [--batch <slots>] [--cache 2000000] [--chunk 32]
//                             [--phases shared,affinity] [--json file] [--limit 240]
// Prints a table, then one JSON object (also written to --json's file when given).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import '../src/stack/tool-logging.js';
import { runRollouts } from '../src/client/run-rollouts.js';
import { trajectoryRequests } from '../src/client/submit.js';
import { createBackend } from '../src/policy/backend-config.js';
import { NO_FAULTS } from '../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../src/policy/simulated/policy-config.js';
import { PREFIX_BLOCK_TOKENS } from '../src/policy/simulated/prefix-cache.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy, type SimulatedRequestRecord } from '../src/policy/simulated/server.js';
import { startSimulatedStack, type SimulatedStack } from '../src/stack/simulated-stack.js';
import { GPU_TASK_QUEUE, serverTaskQueue } from '../src/task-queues.js';
import { pollUntil } from '../src/timing/poll-until.js';

const args = parseArgs(process.argv.slice(2));
const S = {
  trajectories: num('trajectories', 128),
  servers: num('servers', 4),
  slots: num('slots', 8),
  turns: num('turns', 5),
  /** Decode speed of one request, tokens/s: ~1,000-token turns take ~2 s. */
  decodeTokensPerSecond: num('decode', 500),
  /** Prefill speed, uncached prompt tokens/s: a 4,000-token uncached context costs 1 s before its first token. */
  prefillTokensPerSecond: num('prefill', 4000),
  /** Mean answer length (±50%), tokens. */
  reasoningTokens: num('reasoning', 1000),
  prefixCacheTokens: num('cache', 2_000_000),
  chunkTokens: num('chunk', 32),
  /** Requests a server runs at once (vLLM's max-num-seqs); more wait at the server. The GPU worker's slots unless given. */
  batch: args.has('batch') ? num('batch', 8) : undefined,
  phases: (args.get('phases') ?? 'shared,affinity').split(',') as Phase[],
  json: args.get('json'),
  limitSeconds: num('limit', 240),
};
type Phase = 'shared' | 'affinity';
const TARGETS = { hitOfPossible: 0.95, utilisationMaxOverMin: 1.2 };

const log = (line = '') => process.stdout.write(`${line}\n`);
const round = (value: number, digits = 3) => +value.toFixed(digits);

interface Served {
  server: number;
  record: SimulatedRequestRecord;
}

interface TurnRow {
  trajectoryId: string;
  turn: number;
  server: number;
  promptTokens: number;
  cachedTokens: number;
  /** Leading prompt tokens in whole blocks that the previous turn's prompt and output hold (what its server can have cached). */
  possibleTokens: number;
  previousServer?: number;
  /** From the previous turn's last byte to this turn's arrival at a server, ms. */
  gapMs?: number;
}

async function runPhase(stack: SimulatedStack, phase: Phase, index: number) {
  const runName = `affinity-${phase}-${index}-${Date.now()}`;
  const served: Served[] = [];
  const policies: RunningSimulatedPolicy[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    for (let server = 0; server < S.servers; server++) {
      const policy = await startSimulatedPolicy(stack.tokenizer, new AnswerBook(stack.problems), policyConfig(index * 100 + server));
      policies.push(policy);
      policy.onRequestEnd((record) => {
        if (record.rid.startsWith(`${runName}/`)) served.push({ server, record });
      });
      const serverName = `${runName}-server-${server}`;
      stops.push(await stack.startWorkers({ cpu: false, backend: createBackend('sglang', policy.url), slots: S.slots, serverName }));
      await untilOwnQueuePolled(stack.client, serverTaskQueue(serverName));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const samples = Math.ceil(S.trajectories / stack.problems.length);
    const requests = trajectoryRequests(runName, stack.problems, samples, {
      turns: S.turns,
      maxNewTokens: 4096,
      turnAffinity: phase === 'affinity',
    }).slice(0, S.trajectories);
    const started = performance.now();
    const results = await runRollouts(stack.client, requests);
    const ended = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the last requests' end records
    const cacheCounters = policies.map((policy) => policy.stats()).map((s) => ({ queries: s.prefixCacheQueries, hits: s.prefixCacheHits }));
    return summarise(phase, served, results.filter((r) => r.status === 'completed').length, started, ended, cacheCounters);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    for (const policy of policies) await policy.close().catch(() => undefined);
  }
}

function policyConfig(seed: number): SimulatedPolicyConfig {
  return {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    seed,
    seedPerRequest: true,
    tokensPerSecond: S.decodeTokensPerSecond,
    reasoningTokens: S.reasoningTokens,
    chunkTokens: S.chunkTokens,
    incrementalStreamingOutput: true,
    prefixCacheTokens: S.prefixCacheTokens,
    prefillTokensPerSecond: S.prefillTokensPerSecond,
    maxRunningRequests: S.batch ?? S.slots,
  };
}

async function untilOwnQueuePolled(client: Client, taskQueue: string): Promise<void> {
  const { TaskQueueType } = temporal.api.enums.v1;
  await pollUntil(
    async () => {
      const [own, shared] = await Promise.all(
        [taskQueue, GPU_TASK_QUEUE].map((name) =>
          client.workflowService.describeTaskQueue({
            namespace: 'default',
            taskQueue: { name },
            taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
          }),
        ),
      );
      return (own!.pollers?.length ?? 0) > 0 && (shared!.pollers?.length ?? 0) > 0;
    },
    { what: `a poller on ${taskQueue}`, timeoutMs: 30_000, intervalMs: 100, fatal: () => true, done: (polled) => polled },
  );
}

/** trajectoryId/turn/attempt/segment, as the GPU worker names its requests (a new segment after an abort). */
function parseRid(rid: string): { trajectoryId: string; turn: number; attempt: number; segment: number } {
  const parts = rid.split('/');
  const segment = Number(parts.pop());
  const attempt = Number(parts.pop());
  const turn = Number(parts.pop());
  return { trajectoryId: parts.join('/'), turn, attempt, segment };
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function summarise(
  phase: Phase,
  served: Served[],
  completed: number,
  startedMs: number,
  endedMs: number,
  cacheCounters: { queries: number; hits: number }[],
) {
  const wallSeconds = (endedMs - startedMs) / 1000;
  // Each turn's requests of its last attempt (no faults here, so normally one): the first segment's prompt is the
  // turn's context; the last segment's prompt and output are what the server holds after it.
  const final = new Map<string, { first: Served; last: Served }>();
  const order = (s: Served) => {
    const r = parseRid(s.record.rid);
    return r.attempt * 1e6 + r.segment;
  };
  for (const s of served) {
    const { trajectoryId, turn, attempt } = parseRid(s.record.rid);
    const key = `${trajectoryId}#${turn}`;
    const before = final.get(key);
    if (!before || parseRid(before.last.record.rid).attempt < attempt) final.set(key, { first: s, last: s });
    else if (parseRid(before.last.record.rid).attempt === attempt) {
      if (order(s) < order(before.first)) before.first = s;
      if (order(s) > order(before.last)) before.last = s;
    }
  }
  const rows: TurnRow[] = [];
  for (const { first: s } of final.values()) {
    const { trajectoryId, turn } = parseRid(s.record.rid);
    const previous = turn > 0 ? final.get(`${trajectoryId}#${turn - 1}`)?.last : undefined;
    const input = s.record.inputIds;
    // What the previous turn's server cached: its prompt and every output token but the last (prefix-cache.ts), in whole
    // blocks, and never the prompt's last token (the server always computes it).
    const previousIds = previous ? [...previous.record.inputIds, ...previous.record.sentIds.slice(0, -1)] : [];
    const common = Math.min(commonPrefix(previousIds, input), input.length - 1);
    rows.push({
      trajectoryId,
      turn,
      server: s.server,
      promptTokens: input.length,
      cachedTokens: s.record.cachedTokens ?? 0,
      possibleTokens: previous ? Math.floor(common / PREFIX_BLOCK_TOKENS) * PREFIX_BLOCK_TOKENS : 0,
      previousServer: previous?.server,
      gapMs: previous?.record.endedMs === undefined ? undefined : s.record.arrivedMs - previous.record.endedMs,
    });
  }
  const later = rows.filter((r) => r.turn >= 1);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const prompt = sum(later.map((r) => r.promptTokens));
  const hits = sum(later.map((r) => r.cachedTokens));
  const possible = sum(later.map((r) => r.possibleTokens));
  const onPrevious = later.filter((r) => r.previousServer === r.server).length;
  const gaps = later.flatMap((r) => (r.gapMs === undefined ? [] : [r.gapMs])).sort((a, b) => a - b);
  const quantile = (q: number) => round(gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))] ?? 0, 0);

  // Busy slot-seconds: a request holds a place in its server's batch from being scheduled to its last byte; before, it
  // waits at the server (sent there by a GPU worker holding more turns than the batch has places).
  const busy = Array.from({ length: S.servers }, () => 0);
  const peak = Array.from({ length: S.servers }, () => 0);
  const turnsPerServer = Array.from({ length: S.servers }, () => 0);
  const queued = Array.from({ length: S.servers }, () => 0);
  for (let server = 0; server < S.servers; server++) {
    const mine = served.filter((s) => s.server === server);
    turnsPerServer[server] = mine.length;
    busy[server] = sum(mine.map((s) => ((s.record.endedMs ?? endedMs) - (s.record.scheduledMs ?? s.record.arrivedMs)) / 1000));
    queued[server] = sum(mine.map((s) => ((s.record.scheduledMs ?? s.record.arrivedMs) - s.record.arrivedMs) / 1000));
    const events = mine
      .flatMap(
        (s) =>
          [
            [s.record.arrivedMs, 1],
            [s.record.endedMs ?? endedMs, -1],
          ] as const,
      )
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    for (const [, delta] of events) peak[server] = Math.max(peak[server]!, (now += delta));
  }
  const utilisation = busy.map((b) => b / (wallSeconds * S.slots));
  const counterHits = sum(cacheCounters.map((c) => c.hits));
  return {
    phase,
    completed,
    trajectories: S.trajectories,
    turns: rows.length,
    requests: served.length,
    wallSeconds: round(wallSeconds, 2),
    turnsAfterFirst: later.length,
    hitRate: round(hits / prompt),
    possibleHitRate: round(possible / prompt),
    hitOfPossible: round(hits / possible),
    promptTokensAfterFirst: prompt,
    cachedTokensAfterFirst: hits,
    possibleTokensAfterFirst: possible,
    prefilledTokens: sum(rows.map((r) => r.promptTokens - r.cachedTokens)),
    prefilledTokensAfterFirst: prompt - hits,
    prefillSecondsAfterFirst: round((prompt - hits) / S.prefillTokensPerSecond, 1),
    onPreviousServer: round(onPrevious / later.length),
    /** Between a turn's end at its server and the next turn's arrival at one (CPU work, Temporal, and any fallback wait). */
    gapBetweenTurnsMs: { p50: quantile(0.5), p90: quantile(0.9), p99: quantile(0.99), max: round(gaps.at(-1) ?? 0, 0) },
    servers: busy.map((b, server) => ({
      server,
      turns: turnsPerServer[server],
      busySlotSeconds: round(b, 1),
      utilisation: round(utilisation[server]!),
      peakInFlight: peak[server],
      queuedSeconds: round(queued[server]!, 1),
    })),
    utilisationMaxOverMin: round(Math.max(...busy) / Math.min(...busy)),
    meanUtilisation: round(sum(utilisation) / S.servers),
    maxPeakInFlight: Math.max(...peak),
    /** Seconds turns waited at a server for a place in its batch, all servers. */
    queuedAtServerSeconds: round(sum(queued), 1),
    /** The servers' own counters (vLLM's prefix_cache_hits_total), every request: a cross-check of the per-request sums. */
    serverCounterHits: counterHits,
    perRequestHits: sum(served.map((s) => s.record.cachedTokens ?? 0)),
  };
}

type PhaseResult = Awaited<ReturnType<typeof runPhase>>;

function table(results: PhaseResult[]): void {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines: [string, (r: PhaseResult) => string, string][] = [
    ['completed / trajectories', (r) => `${r.completed} / ${r.trajectories}`, ''],
    ['wall time', (r) => `${r.wallSeconds.toFixed(1)} s`, ''],
    ['prefix-cache hit rate, turns ≥ 2', (r) => pct(r.hitRate), ''],
    ['possible hit rate, turns ≥ 2', (r) => pct(r.possibleHitRate), ''],
    ['achieved ÷ possible', (r) => pct(r.hitOfPossible), `affinity ≥ ${pct(TARGETS.hitOfPossible)}`],
    ['tokens prefilled (uncached), all turns', (r) => r.prefilledTokens.toLocaleString('en-US'), ''],
    ['tokens prefilled, turns ≥ 2', (r) => `${r.prefilledTokensAfterFirst.toLocaleString('en-US')} (${r.prefillSecondsAfterFirst} s)`, ''],
    ['turns ≥ 2 on their previous server', (r) => pct(r.onPreviousServer), ''],
    ['gap between turns p50 / p90 / max', (r) => `${r.gapBetweenTurnsMs.p50} / ${r.gapBetweenTurnsMs.p90} / ${r.gapBetweenTurnsMs.max} ms`, ''],
    ['slot utilisation per server', (r) => r.servers.map((s) => pct(s.utilisation)).join(' '), ''],
    ['busy slot-s max ÷ min', (r) => r.utilisationMaxOverMin.toFixed(2), `≤ ${TARGETS.utilisationMaxOverMin}`],
    ['turns per server', (r) => r.servers.map((s) => s.turns).join(' '), ''],
    ['peak requests in flight per server', (r) => r.servers.map((s) => s.peakInFlight).join(' '), `batch ${S.batch ?? S.slots}`],
    ['turn-s waiting at a server (batch full)', (r) => `${r.queuedAtServerSeconds} s`, ''],
  ];
  const headers = ['', ...results.map((r) => (r.phase === 'shared' ? 'shared queue' : 'turn affinity')), 'target'];
  const cells = lines.map(([name, value, target]) => [name, ...results.map(value), target]);
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const format = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  log(format(headers));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells) log(format(row));
}

async function main(): Promise<number> {
  log(
    `Turn affinity: ${S.servers} simulated servers × ${S.slots} slots, ${S.trajectories} trajectories × ${S.turns} turns, ~${S.reasoningTokens}-token answers ` +
      `at ${S.decodeTokensPerSecond} tokens/s a request, prefill ${S.prefillTokensPerSecond} tokens/s, prefix cache ${S.prefixCacheTokens} tokens a server; ` +
      `${os.cpus().length} cores, node ${process.version}`,
  );
  const startedAt = performance.now();
  const stack = await startSimulatedStack({}, undefined, { prefix: 'ratchet-bench-affinity-' });
  const watchdog = setTimeout(() => {
    log(`bench-affinity: over ${S.limitSeconds} s, stopping`);
    void stack.stop().finally(() => process.exit(2));
  }, S.limitSeconds * 1000);
  watchdog.unref();
  try {
    await stack.startWorkers({ gpu: false });
    // Warm-up: the CPU worker's first workflows, on the stack's own instant policy and a GPU worker for it.
    const stopWarmGpu = await stack.startWorkers({ cpu: false, slots: 4, serverName: 'warm-up' });
    await runRollouts(stack.client, trajectoryRequests(`warmup-${Date.now()}`, stack.problems.slice(0, 4), 1, { turns: 2 }));
    await stopWarmGpu();
    log(`  stack ready after ${round((performance.now() - startedAt) / 1000, 1)} s`);
    const results: PhaseResult[] = [];
    for (const [index, phase] of S.phases.entries()) {
      const result = await runPhase(stack, phase, index);
      log(`  ${phase}: ${result.wallSeconds} s, hit rate on turns ≥ 2 ${result.hitRate} of ${result.possibleHitRate} possible`);
      results.push(result);
    }
    log('');
    table(results);
    const shared = results.find((r) => r.phase === 'shared');
    const affinity = results.find((r) => r.phase === 'affinity');
    const gain = shared && affinity ? round(1 - affinity.wallSeconds / shared.wallSeconds) : undefined;
    const checks = affinity
      ? {
          hitOfPossible: { value: affinity.hitOfPossible, target: TARGETS.hitOfPossible, met: affinity.hitOfPossible >= TARGETS.hitOfPossible },
          utilisationMaxOverMin: {
            value: affinity.utilisationMaxOverMin,
            target: TARGETS.utilisationMaxOverMin,
            met: affinity.utilisationMaxOverMin <= TARGETS.utilisationMaxOverMin,
          },
          wallTimeGain: gain,
        }
      : undefined;
    if (gain !== undefined)
      log(`\nwall time: affinity ${affinity!.wallSeconds} s vs shared ${shared!.wallSeconds} s (${(gain * 100).toFixed(1)}% less)`);
    const output = {
      machine: { cores: os.cpus().length, node: process.version, loadAverage: os.loadavg().map((l) => round(l, 2)) },
      settings: { ...S, json: undefined, blockTokens: PREFIX_BLOCK_TOKENS },
      totalSeconds: round((performance.now() - startedAt) / 1000, 1),
      phases: results,
      checks,
    };
    log(JSON.stringify(output, null, 2));
    if (S.json) writeFileSync(S.json, `${JSON.stringify(output, null, 2)}\n`);
    return results.every((r) => r.completed === r.trajectories) ? 0 : 1;
  } finally {
    clearTimeout(watchdog);
    await stack.stop();
  }
}

function parseArgs(argv: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    map.set(name!, inline ?? argv[++i] ?? '');
  }
  return map;
}

function num(name: string, fallback: number): number {
  const value = args.get(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive number, not ${value}`);
  return parsed;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  log(`bench-affinity failed: ${(error as Error).stack ?? String(error)}`);
}
process.exit(exitCode);

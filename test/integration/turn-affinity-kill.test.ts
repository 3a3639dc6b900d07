import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { decodeTimeoutType, defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time.js';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerateInput } from '../../src/activities/generate.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import type { SimulatedRequestRecord } from '../../src/policy/simulated/policy-stats.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { stopProcess } from '../../src/stack/child-process.js';
import { GPU_TASK_QUEUE, serverTaskQueue } from '../../src/task-queues.js';
import { FALLBACK_ATTEMPT_BASE } from '../../src/workflows/turn-affinity.js';
import { expectSeedInvariants } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

/**
 * Turn affinity (issue 27) when the sticky server dies: two GPU workers in their own processes (the built CLI), each
 * with its own server name and its own simulated policy, so every request is attributable to the worker that sent it.
 */
const CLI = path.resolve(import.meta.dirname, '../../dist/cli/main.js');
const TOKENS_PER_SECOND = 100;
const HEARTBEAT_MS = 500;
const HEARTBEAT_TIMEOUT_S = 3;
const FALLBACK_S = 1;
const TIMEOUTS = { generateHeartbeatSeconds: HEARTBEAT_TIMEOUT_S, affinityFallbackSeconds: FALLBACK_S };
// What one dead attempt may have generated past its last checkpoint: one heartbeat interval, plus a chunk or two.
const ONE_INTERVAL_OF_TOKENS = (TOKENS_PER_SECOND * HEARTBEAT_MS) / 1000 + 16;
const SLACK_MS = 3_000;
const POLICY = { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS, tokensPerSecond: TOKENS_PER_SECOND, reasoningTokens: 800 };

const A = 'sim-a';
const B = 'sim-b';
const A2 = 'sim-a2';

let stack: TestStack;
/** Worker A's server; B's is the stack's own policy. */
let policyA: RunningSimulatedPolicy;
let stopCpuWorker: () => Promise<void>;
const children: ChildProcess[] = [];
/** Every request each policy finished (completed, cut off by a dead client, ...), tokens included. */
const ended = { a: [] as SimulatedRequestRecord[], b: [] as SimulatedRequestRecord[] };

/** A GPU worker in its own process, named `serverName` (its own task queue is ratchet-gpu@serverName). */
function spawnGpuWorker(serverName: string, policy: RunningSimulatedPolicy): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'worker', 'gpu'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      DATABASE_URL: stack.databaseUrl,
      RATCHET_POLICY_URL: policy.url,
      RATCHET_HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS),
      RATCHET_GPU_SERVER_NAME: serverName,
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

const isProbe = (record: { rid: string }) => record.rid.startsWith('ratchet-logprob-probe/');
/** `trajectoryId/turn/attempt/segment`, as generate names its requests (a segment per weight-update abort). */
function parseRid(rid: string): { trajectoryId: string; turn: number; attempt: number } {
  const parts = rid.split('/');
  return { trajectoryId: parts.slice(0, -3).join('/'), turn: Number(parts.at(-3)), attempt: Number(parts.at(-2)) };
}
const probes = (policy: RunningSimulatedPolicy) => policy.stats().recent.filter(isProbe).length;

/** One generate activity as the workflow's history shows it. */
interface GenerateActivity {
  turn: number;
  attemptBase: number;
  queue: string;
  scheduledMs: number;
  startedMs?: number;
  startedAttempt?: number;
  startedBy?: string;
  timedOutMs?: number;
  timeoutType?: string;
  completedMs?: number;
}

async function generateActivities(handle: WorkflowHandle): Promise<GenerateActivity[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const byScheduledId = new Map<string, GenerateActivity>();
  for (const event of events) {
    const at = tsToMs(event.eventTime);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled && scheduled.activityType?.name === 'generate') {
      const input = defaultPayloadConverter.fromPayload<GenerateInput>(scheduled.input!.payloads![0]!);
      byScheduledId.set(String(event.eventId), {
        turn: input.turn,
        attemptBase: input.attemptBase ?? 0,
        queue: scheduled.taskQueue!.name!,
        scheduledMs: at,
      });
    }
    const started = event.activityTaskStartedEventAttributes;
    const startedActivity = started && byScheduledId.get(String(started.scheduledEventId));
    if (startedActivity)
      Object.assign(startedActivity, { startedMs: at, startedAttempt: started.attempt ?? 1, startedBy: started.identity ?? undefined });
    const timedOut = event.activityTaskTimedOutEventAttributes;
    const timedOutActivity = timedOut && byScheduledId.get(String(timedOut.scheduledEventId));
    if (timedOutActivity) {
      const failure = timedOut.failure;
      const info = failure?.timeoutFailureInfo ?? failure?.cause?.timeoutFailureInfo;
      Object.assign(timedOutActivity, { timedOutMs: at, timeoutType: decodeTimeoutType(info?.timeoutType) });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const completedActivity = completed && byScheduledId.get(String(completed.scheduledEventId));
    if (completedActivity) completedActivity.completedMs = at;
  }
  return [...byScheduledId.values()];
}

async function servedBy(prefix: string): Promise<Map<string, string | null>> {
  const { rows } = await stack.pool.query<{ trajectory_id: string; turn: number; served_by: string | null }>(
    'SELECT trajectory_id, turn, served_by FROM monitor_records WHERE trajectory_id LIKE $1',
    [`${prefix}%`],
  );
  return new Map(rows.map((row) => [`${row.trajectory_id}/${row.turn}`, row.served_by]));
}

beforeAll(async () => {
  // ~800-token answers at 100 tokens/s: every turn streams for ~8 s, long enough to kill one mid-way.
  stack = await startTestStack({ ...POLICY, seed: 5 });
  policyA = await startSimulatedPolicy(stack.tokenizer, new AnswerBook(stack.problems), { ...POLICY, seed: 6 });
  policyA.onRequestEnd((record) => ended.a.push(record));
  stack.policy.onRequestEnd((record) => ended.b.push(record));
  stopCpuWorker = await stack.startWorkers({ gpu: false });
});

afterAll(async () => {
  for (const child of children) await stopProcess(child, 2_000);
  await stopCpuWorker?.();
  await policyA?.close();
  await stack?.stop();
});

describe('turn affinity when the sticky GPU worker dies', () => {
  let workerB: ChildProcess;

  it(
    "SIGKILLed mid-turn: its trajectories' turns run on the other worker one heartbeat timeout later, resumed from their checkpoints, each trajectory stored once",
    { timeout: 180_000 },
    async () => {
      const prefix = 'affinity-kill/';
      const requests = trajectoryRequests('affinity-kill', stack.problems.slice(0, 8), 1, { turns: 3 });
      // A alone takes every first turn, so every trajectory's next turn is sent to A's own queue.
      const workerA = spawnGpuWorker(A, policyA);
      const handles = await Promise.all(
        requests.map(async (request) => (await submitTrajectory(stack.client, { ...request, timeouts: TIMEOUTS })).handle),
      );
      const onA = () => policyA.stats().recent.filter((record) => !isProbe(record) && record.rid.startsWith(prefix));
      await until(() => new Set(onA().map((record) => parseRid(record.rid).trajectoryId)).size === requests.length, 60_000);
      // B comes up while A generates: it polls the shared queue (and its own, which no trajectory names yet).
      workerB = spawnGpuWorker(B, stack.policy);
      await until(() => probes(stack.policy) >= 1, 30_000);

      // Kill A once most trajectories' second turn has streamed a while on A: each has checkpointed at least twice.
      const turnOnesStreaming = () =>
        onA().filter((record) => parseRid(record.rid).turn >= 1 && record.end === undefined && record.sentIds.length >= 150);
      await until(() => turnOnesStreaming().length >= 6, 60_000);
      const described = await Promise.all(handles.map((handle) => handle.describe()));
      const pendingOnA = described
        .flatMap((d) => d.raw.pendingActivities ?? [])
        .filter((activity) => activity.lastWorkerIdentity?.startsWith(`${workerA.pid}@`));
      const openOnA = onA().filter((record) => record.end === undefined);
      const killWallMs = Date.now();
      const killPerfMs = performance.now();
      workerA.kill('SIGKILL');
      await new Promise((resolve) => workerA.once('exit', resolve));
      // What A had generated and stored before it died (its activity may not have reported it): the only turns it may serve.
      const storedByA = new Set(
        (
          await stack.pool.query<{ trajectory_id: string; turn: number }>('SELECT trajectory_id, turn FROM turn_outputs WHERE served_by = $1', [
            serverTaskQueue(A),
          ])
        ).rows.map((row) => `${row.trajectory_id}/${row.turn}`),
      );
      console.log(
        `kill: ${openOnA.length} requests open on A (${openOnA.map((r) => `${r.rid}@${r.sentIds.length}`).join(', ')}); ${pendingOnA.length} activities Temporal shows started on A`,
      );
      expect(pendingOnA.length).toBeGreaterThanOrEqual(openOnA.length);

      // When each killed turn's first token reached B (the policy's records have no per-token times: sampled).
      const firstTokenOnB = new Map<string, number>();
      const sampler = setInterval(() => {
        for (const record of stack.policy.stats().recent)
          if (!firstTokenOnB.has(record.rid) && record.sentIds.length > 0) firstTokenOnB.set(record.rid, performance.now());
      }, 20);
      const results = await Promise.all(handles.map((handle) => handle.result())).finally(() => clearInterval(sampler));

      // Nothing lost: every trajectory completed all its turns, one row each, with the seed's invariants.
      for (const result of results) {
        expect(result.status).toBe('completed');
        expect(result.turns).toHaveLength(3);
      }
      const rows = await stack.exported(prefix, { includeFailed: true });
      expect(rows.map((row) => row.trajectory_id).sort()).toEqual(requests.map((request) => request.trajectoryId).sort());
      for (const row of rows) {
        expect(row.status).toBe('completed');
        expectSeedInvariants(row, stack.tokenizer);
      }

      // Every turn A had not stored before it died was served by B.
      const served = await servedBy(prefix);
      expect(served.size).toBe(requests.length * 3);
      const afterKill = [...served].filter(([key]) => !storedByA.has(key));
      for (const [key, server] of afterKill) expect(server, key).toBe(serverTaskQueue(B));
      for (const [key, server] of served) if (storedByA.has(key)) expect(server, key).toBe(serverTaskQueue(A));
      expect(afterKill.length).toBeGreaterThanOrEqual(requests.length);

      // Each turn killed on A resumed on B from its checkpoint: generated twice at most one heartbeat interval's tokens.
      const resultOf = new Map(requests.map((request, i) => [request.trajectoryId, results[i]!]));
      const killed = openOnA.map((open) => {
        const { trajectoryId, turn, attempt } = parseRid(open.rid);
        const sentByA = ended.a.find((record) => record.rid === open.rid)?.sentIds.length ?? open.sentIds.length;
        const resumed = resultOf.get(trajectoryId)!.turns[turn]!.resumedTokens ?? 0;
        return { trajectoryId, turn, attempt, rid: open.rid, sentByA, resumed };
      });
      expect(killed.length).toBeGreaterThanOrEqual(6);
      expect(killed.filter((turn) => turn.resumed > 0).length).toBeGreaterThanOrEqual(6);
      for (const turn of killed) {
        // A turn killed before its first checkpoint (it had just started) starts over: it too loses no more than that.
        if (turn.sentByA > ONE_INTERVAL_OF_TOKENS) expect(turn.resumed, turn.rid).toBeGreaterThan(0);
        expect(turn.resumed, turn.rid).toBeLessThanOrEqual(turn.sentByA);
        expect(turn.sentByA - turn.resumed, turn.rid).toBeLessThanOrEqual(ONE_INTERVAL_OF_TOKENS);
      }
      // And across the whole run: what both servers generated is what was kept plus those few tokens per killed turn.
      const generated = (records: SimulatedRequestRecord[]) =>
        records.filter((record) => record.rid.startsWith(prefix)).reduce((sum, record) => sum + record.sentIds.length, 0);
      const kept = results.reduce((sum, result) => sum + result.turns.reduce((turns, turn) => turns + turn.outputLen, 0), 0);
      const generatedTwice = generated(ended.a) + generated(ended.b) - kept;
      console.log(
        `kill: servers generated ${generated(ended.a)} (A) + ${generated(ended.b)} (B) tokens for ${kept} kept; ${generatedTwice} generated twice over ${killed.length} killed turns ` +
          `(per turn: ${killed.map((t) => `${t.sentByA - t.resumed} of ${t.sentByA}, ${t.resumed} resumed`).join('; ')})`,
      );
      expect(generatedTwice).toBe(killed.reduce((sum, turn) => sum + turn.sentByA - turn.resumed, 0));
      expect(generated(ended.a) + generated(ended.b)).toBe(
        policyA.stats().generatedTokens +
          stack.policy.stats().generatedTokens -
          [policyA, stack.policy].reduce(
            (sum, policy) =>
              sum +
              policy
                .stats()
                .recent.filter(isProbe)
                .reduce((probed, record) => probed + record.sentIds.length, 0),
            0,
          ),
      );

      // How long each killed turn waited: a turn on A's own queue, A's heartbeat timeout, then at once the shared queue
      // (the own queue gets one attempt); a first turn on the shared queue, the heartbeat timeout and the retry's backoff.
      const ownLimitMs = HEARTBEAT_TIMEOUT_S * 1000 + SLACK_MS;
      const limitMs = (HEARTBEAT_TIMEOUT_S + FALLBACK_S) * 1000 + SLACK_MS;
      const delays = await Promise.all(
        killed.map(async (turn) => {
          const activities = (await generateActivities(handles[requests.findIndex((request) => request.trajectoryId === turn.trajectoryId)]!)).filter(
            (activity) => activity.turn === turn.turn,
          );
          const own = activities.find((activity) => activity.queue === serverTaskQueue(A));
          const shared = activities.find((activity) => activity.queue === GPU_TASK_QUEUE && activity.completedMs !== undefined);
          const onB = ended.b.find((record) => parseRid(record.rid).trajectoryId === turn.trajectoryId && parseRid(record.rid).turn === turn.turn)!;
          return { turn, own, shared, onB, firstTokenMs: firstTokenOnB.get(onB.rid)! - killPerfMs };
        }),
      );
      for (const { turn, own, shared, onB, firstTokenMs } of delays) {
        const ms = (t: number | undefined) => (t === undefined ? '-' : `${((t - killWallMs) / 1000).toFixed(2)} s`);
        console.log(
          `kill: ${turn.rid}: own-queue activity timed out (${own?.timeoutType ?? 'none'}) ${ms(own?.timedOutMs)} after the kill; ` +
            `shared activity (attempt base ${shared?.attemptBase}) scheduled ${ms(shared?.scheduledMs)}, started ${ms(shared?.startedMs)} by ${shared?.startedBy}; ` +
            `request ${onB.rid} reached B ${((onB.arrivedMs - killPerfMs) / 1000).toFixed(2)} s, first token ${(firstTokenMs / 1000).toFixed(2)} s after the kill`,
        );
        if (turn.turn >= 1) {
          // The turn on A's own queue timed out on its heartbeat and went to the shared queue at once.
          expect(own?.timeoutType, turn.rid).toBe('HEARTBEAT');
          expect(shared?.attemptBase, turn.rid).toBe(FALLBACK_ATTEMPT_BASE);
          expect(parseRid(onB.rid).attempt, turn.rid).toBe(FALLBACK_ATTEMPT_BASE + 1);
          expect(firstTokenMs, turn.rid).toBeLessThanOrEqual(ownLimitMs);
        }
        expect(shared?.startedMs, turn.rid).toBeDefined();
        expect(shared!.startedMs! - killWallMs, turn.rid).toBeLessThanOrEqual(limitMs);
        expect(firstTokenMs, turn.rid).toBeLessThanOrEqual(limitMs);
      }
      const worst = Math.max(...delays.map((d) => d.firstTokenMs));
      console.log(
        `kill: kill → first token on B: ${delays.map((d) => (d.firstTokenMs / 1000).toFixed(2)).join(', ')} s (worst ${(worst / 1000).toFixed(2)} s; limit ${ownLimitMs / 1000} s = heartbeat timeout ${HEARTBEAT_TIMEOUT_S} s + ${SLACK_MS / 1000} s slack on A's own queue, ` +
          `${limitMs / 1000} s with the shared queue's retry backoff)`,
      );
    },
  );

  it(
    'stopped for good between turns: the next turn waits the fallback time on its queue, then runs on the other worker',
    { timeout: 120_000 },
    async () => {
      // A2 alone takes the first turn: B stops (it runs nothing now) and comes back once A2 has the turn.
      await stopProcess(workerB, 10_000);
      const workerA2 = spawnGpuWorker(A2, policyA);
      const [request] = trajectoryRequests('affinity-gone', stack.problems.slice(8, 9), 1, { turns: 2 });
      const { handle } = await submitTrajectory(stack.client, { ...request!, timeouts: TIMEOUTS });
      const turnZero = () => policyA.stats().recent.find((record) => record.rid.startsWith(`${request!.trajectoryId}/0/`));
      await until(() => turnZero() !== undefined, 60_000);
      const probesOnB = probes(stack.policy);
      spawnGpuWorker(B, stack.policy);
      await until(() => probes(stack.policy) > probesOnB, 30_000);

      // The workflow cannot move on while no CPU worker runs: the first turn ends on A2 and the second is not yet sent.
      await stopCpuWorker();
      await until(
        async () => (await generateActivities(handle)).some((activity) => activity.turn === 0 && activity.completedMs !== undefined),
        60_000,
      );
      expect((await handle.describe()).raw.pendingActivities ?? []).toHaveLength(0);
      // A2 stops with no turn running: its server is gone for good.
      const stopping = performance.now();
      await stopProcess(workerA2, 10_000);
      console.log(
        `gone: A2 stopped gracefully in ${((performance.now() - stopping) / 1000).toFixed(2)} s (exit ${workerA2.exitCode ?? workerA2.signalCode})`,
      );
      expect(workerA2.exitCode).toBe(0);
      stopCpuWorker = await stack.startWorkers({ gpu: false });

      const result = await handle.result();
      expect(result.status).toBe('completed');
      expect(result.turns).toHaveLength(2);
      const [row] = await stack.exported('affinity-gone/', { includeFailed: true });
      expect(row?.status).toBe('completed');
      expectSeedInvariants(row!, stack.tokenizer);
      const served = await servedBy('affinity-gone/');
      expect(served.get(`${request!.trajectoryId}/0`)).toBe(serverTaskQueue(A2));
      expect(served.get(`${request!.trajectoryId}/1`)).toBe(serverTaskQueue(B));
      // Nothing generated twice: the first turn on A2, the second on B, each once.
      const rids = [...ended.a, ...ended.b].filter((record) => record.rid.startsWith(`${request!.trajectoryId}/`)).map((record) => record.rid);
      expect(rids.sort()).toEqual([`${request!.trajectoryId}/0/1/0`, `${request!.trajectoryId}/1/${FALLBACK_ATTEMPT_BASE + 1}/0`]);

      const activities = (await generateActivities(handle)).filter((activity) => activity.turn === 1);
      const own = activities.find((activity) => activity.queue === serverTaskQueue(A2))!;
      const shared = activities.find((activity) => activity.queue === GPU_TASK_QUEUE)!;
      expect(own.timeoutType).toBe('SCHEDULE_TO_START');
      expect(own.startedMs).toBeUndefined();
      expect(shared.attemptBase).toBe(FALLBACK_ATTEMPT_BASE);
      const waitMs = shared.startedMs! - own.scheduledMs;
      console.log(
        `gone: turn 1 scheduled on A2's queue, timed out there after ${((own.timedOutMs! - own.scheduledMs) / 1000).toFixed(3)} s; ` +
          `shared activity scheduled ${((shared.scheduledMs - own.scheduledMs) / 1000).toFixed(3)} s, started on B ${(waitMs / 1000).toFixed(3)} s after the turn was sent (fallback ${FALLBACK_S} s)`,
      );
      expect(own.timedOutMs! - own.scheduledMs).toBeGreaterThanOrEqual(FALLBACK_S * 1000);
      expect(waitMs).toBeGreaterThanOrEqual(FALLBACK_S * 1000);
      expect(waitMs).toBeLessThan(FALLBACK_S * 1000 + SLACK_MS);
    },
  );
});

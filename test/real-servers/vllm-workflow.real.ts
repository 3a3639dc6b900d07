import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { freePort, isListening } from '../../src/stack/free-port.js';
import { stopProcess } from '../../src/stack/child-process.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { expectSeedInvariants, expectTokenVersions } from '../../scripts/support/seed-invariants.js';
import { POLICY_MODELS, startVllm, stopStartedServers, type RunningVllm } from '../../src/stack/vllm-server.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import type { ProbeReference } from '../../src/policy/weights-proof.js';
import { publisherReference } from './publisher-reference.js';

const CLI = path.resolve(import.meta.dirname, '../../dist/cli/main.js');
const HEARTBEAT_MS = 500;

let stack: TestStack;
let vllm: RunningVllm;
let stopCpuWorker: () => Promise<void>;
let stopGpuWorker: (() => Promise<void>) | undefined;
const children: ChildProcess[] = [];
/** Version 1's probe reference, as its publisher computes it (every load is proven against it: issue 33). */
let reference: Promise<ProbeReference>;

// One Temporal + Postgres + vLLM for the file; the tests run in order and share the server's counters, so each
// waits for the server to be idle before it measures.
beforeAll(async () => {
  reference = publisherReference(POLICY_MODELS[1]!);
  stack = await startTestStack();
  vllm = await startVllm();
  stopCpuWorker = await stack.startWorkers({ gpu: false });
  stopGpuWorker = await stack.startWorkers({ cpu: false, backend: new VllmBackend(vllm.url), heartbeatIntervalMs: HEARTBEAT_MS });
});

afterAll(async () => {
  for (const child of children) await stopProcess(child, 2_000);
  await stopGpuWorker?.();
  await stopCpuWorker?.();
  await stopStartedServers();
  await stack?.stop();
});

describe('trajectories against a real vLLM', () => {
  it("completes every trajectory with rows that pass the seed invariants and the chat template's exact tokens", async () => {
    const problems = stack.problems.slice(0, 4);
    const results = await runRollouts(stack.client, trajectoryRequests('real', problems, 1, { turns: 2, maxNewTokens: 24 }));
    expect(results.map((r) => r.status)).toEqual(problems.map(() => 'completed'));
    const rows = await stack.exported('real/');
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      const problem = problems.find((p) => row.trajectory_id.includes(p.qid))!;
      // The prompt is the chat template's rendering of the problem; expectSeedInvariants checks each feedback too.
      expect(row.packed_prompts).toEqual(promptIds(stack.tokenizer, problem.problem));
      expectSeedInvariants(row, stack.tokenizer);
      expectTokenVersions(row);
      // Real logprobs of a random model over 151,936 tokens: about -11.9 each, never the zeros of a prompt.
      const outputLogprobs = row.packed_logprobs.filter((lp) => lp !== 0);
      expect(outputLogprobs.length).toBe(row.seqlens.reduce((sum, len, t) => sum + len - row.prompt_lens[t]!, 0));
      for (const lp of outputLogprobs) expect(lp).toBeLessThan(-8);
    }
  });

  it('reloads the weights when a policy version is published mid-turn, splitting the turn across versions', async () => {
    await untilIdle();
    const before = await greedyProbe();
    // Turns long enough that the reload lands mid-turn even when a busy server's counter lags by seconds, or an
    // idle one streams fast (~90 tokens/s here: 1,600 tokens is ~18 s; once, 1,200 ended before the reload). The
    // publish waits for 100 tokens, past the first checkpoints (every 500 ms): a reload before any checkpoint makes
    // the resumed turn regenerate from its start under the new version.
    const [request] = trajectoryRequests('bump', stack.problems.slice(4, 5), 1, { turns: 2, maxNewTokens: 1600 });
    const start = (await vllm.metrics()).generatedTokens;
    const { handle } = await submitTrajectory(stack.client, request!);
    await until(async () => (await vllm.metrics()).generatedTokens - start >= 100, 60_000);
    await publishPolicyVersion(stack.pool, 1, POLICY_MODELS[1], await reference);
    const result = await handle.result();

    expect(result.turns[0]!.versionStart).toBe(0);
    expect(result.turns[0]!.versionEnd).toBe(1);
    expect(result.turns[1]!.versionStart).toBe(1);
    const [row] = await stack.exported('bump/');
    expectSeedInvariants(row!, stack.tokenizer);
    expectTokenVersions(row!);
    const firstOutput = row!.token_versions.slice(row!.prompt_lens[0]!, row!.seqlens[0]!);
    expect(firstOutput).toContain(0);
    expect(firstOutput).toContain(1);
    // The server really serves the other seed's weights now: greedy decoding of the same prompt changed.
    expect(await greedyProbe()).not.toEqual(before);
  });

  it("takes a cancelled trajectory's request off the server (its running gauge drops) and records the failure", async () => {
    await untilIdle();
    const [request] = trajectoryRequests('cancel', stack.problems.slice(5, 6), 1, { turns: 2, maxNewTokens: 1500 });
    const start = (await vllm.metrics()).generatedTokens;
    const { handle } = await submitTrajectory(stack.client, request!);
    await until(async () => {
      const m = await vllm.metrics();
      return m.running === 1 && m.generatedTokens - start > 20;
    }, 60_000);
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    await until(async () => (await vllm.metrics()).running === 0, 15_000);
    const { rows } = await stack.pool.query("SELECT status, error FROM trajectories WHERE trajectory_id LIKE 'cancel/%'");
    expect(rows).toHaveLength(1);
    expect(rows[0].status).toBe('failed');
    expect(rows[0].error).toMatch(/cancel/i);
  });
});

describe('failures against a real vLLM', () => {
  it(
    'resumes a turn whose GPU worker was SIGKILLed from its checkpoint, regenerating at most one heartbeat interval',
    { timeout: 420_000 },
    async () => {
      await stopGpuWorker?.();
      stopGpuWorker = undefined;
      await untilIdle();
      for (let attempt = 1; ; attempt++) {
        // A turn long enough that the kill lands mid-turn even when a starved server runs hundreds of tokens ahead.
        const [request] = trajectoryRequests(`kill${attempt}`, stack.problems.slice(6, 7), 1, { turns: 1, maxNewTokens: 1500 });
        const start = (await vllm.metrics()).generatedTokens;
        const { handle } = await submitTrajectory(stack.client, { ...request!, timeouts: { generateHeartbeatSeconds: 3 } });

        const metricsPort = await freePortPair();
        const first = spawnGpuWorker({ RATCHET_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
        // Timed by what the worker has checkpointed, not by the server's counter: the kill lands mid-turn, with tokens
        // in the checkpoint to resume from.
        const checkpointed = async () =>
          (
            await stack.pool.query<{ n: number }>('SELECT coalesce(max(token_count), 0)::int AS n FROM turn_checkpoints WHERE trajectory_id = $1', [
              request!.trajectoryId,
            ])
          ).rows[0]!.n;
        // Up to two minutes: a cold worker process loads its bundle and probes the server before it polls. A worker that
        // died, or a wait that ran out, says what it saw (one CI run timed out here with no trace of why).
        const untilCheckpointed = async (tokens: number) => {
          try {
            await until(async () => {
              if (first.exitCode !== null || first.signalCode !== null)
                throw new WorkerExited(`the GPU worker exited (${first.exitCode ?? first.signalCode}) before ${tokens} tokens were checkpointed`);
              return (await checkpointed()) >= tokens;
            }, 120_000);
          } catch (error) {
            const pending = (await handle.describe().catch(() => undefined))?.raw.pendingActivities ?? [];
            const metrics = await vllm.metrics().catch((e: Error) => e.message);
            throw new Error(
              `${(error as Error).message}; checkpointed ${await checkpointed()}, server ${JSON.stringify(metrics)}, ` +
                `pending activities ${JSON.stringify(pending.map((a) => ({ type: a.activityType?.name, state: a.state, attempt: a.attempt, failure: a.lastFailure?.message })))}`,
            );
          }
        };
        await untilCheckpointed(40);
        const rateStart = { at: Date.now(), tokens: await checkpointed() };
        // The worker's count is followed in the background, so no scrape delays the kill; the last one before the kill
        // is a lower bound of what had reached the worker.
        let receivedAtKill = 0;
        let following = true;
        const follow = (async () => {
          while (following) {
            receivedAtKill = await tokensReceived(metricsPort).catch(() => receivedAtKill);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();
        await untilCheckpointed(100);
        const checkpointAtKill = await checkpointed();
        const rate = (checkpointAtKill - rateStart.tokens) / ((Date.now() - rateStart.at) / 1000);
        const exited = new Promise((resolve) => first.once('exit', resolve));
        first.kill('SIGKILL');
        following = false;
        await follow;
        await exited;
        // The server takes the dead connection's request off; what it generated for it is then final.
        await until(async () => (await vllm.metrics()).running === 0, 15_000);
        const firstAttempt = await settledCount(start);

        const second = spawnGpuWorker();
        const result = await handle.result();
        expect(result.status).toBe('completed');
        const kept = result.turns[0]!.outputLen;
        expect(kept).toBe(1500);
        const resumed = result.turns[0]!.resumedTokens ?? 0;
        await stopProcess(second, 2_000);
        const completedBy = await completedAttempt(request!.trajectoryId);
        if (completedBy === 1 && attempt < 5) {
          // The kill came after the turn had finished: a CPU-starved vLLM generates far ahead of its stream and then
          // delivers in bursts, so the worker can hold the whole turn while its last checkpoint still shows ~100
          // tokens (one CI run saw 1,498 received at the kill). A kill that hit nothing proves nothing: run again.
          console.log(`kill mid-turn on vLLM: try ${attempt} came after the turn had finished (attempt 1 completed it); trying again`);
          continue;
        }
        // The attempt that finished the turn was a retry, so the kill hit the generating worker.
        expect(completedBy).toBeGreaterThan(1);
        // Nothing checkpointed before the kill was lost.
        expect(resumed).toBeGreaterThanOrEqual(checkpointAtKill);
        // Ratchet's part: of what the server had streamed to the dead worker, all but one interval was checkpointed.
        // One interval at the rate the server showed (floored at 100 tokens/s), plus a chunk's slack.
        const bound = Math.ceil((Math.max(rate, 100) * HEARTBEAT_MS) / 1000) + 16;
        // Logged, not asserted: the worker's count is scraped every 100 ms in the background, so it is only a lower
        // bound of what had reached the worker at the kill.
        // The server's own count is logged, not asserted: on a CPU-starved machine vLLM's counter lags its engine by
        // seconds, and its engine runs up to a thousand tokens ahead of the stream (tokens a dead worker never got).
        // The simulated policy's exact count is asserted in test/integration/gpu-worker-kill.test.ts.
        await until(async () => (await vllm.metrics()).generatedTokens - start >= kept, 15_000);
        const generated = await settledCount(start);
        // What the server generated for the dead worker beyond what reached it is the server's lead over its own
        // stream (a CPU-starved vLLM API server runs hundreds of tokens ahead) plus its time to see the disconnect.
        console.log(
          `kill mid-turn on vLLM: the first attempt generated ${firstAttempt} tokens, ${receivedAtKill} reached the worker by the kill, ` +
            `${checkpointAtKill} were checkpointed then and ${resumed} resumed; ${generated - kept} generated twice in all, ` +
            `${Math.max(0, receivedAtKill - resumed)} of them received by the worker (bound ${bound} at ${rate.toFixed(0)} tokens/s)`,
        );
        const [row] = await stack.exported(`kill${attempt}/`);
        expectSeedInvariants(row!, stack.tokenizer);
        return;
      }
    },
  );

  it(
    'finishes a run through a vLLM killed and restarted mid-run, losing nothing, with no attempt burnt while it was down',
    { timeout: 420_000 },
    async () => {
      for (const child of children) await stopProcess(child, 2_000);
      stopGpuWorker = await stack.startWorkers({ cpu: false, backend: new VllmBackend(vllm.url), heartbeatIntervalMs: HEARTBEAT_MS });
      await untilIdle();
      const problems = stack.problems.slice(7, 11);
      const requests = trajectoryRequests('restart', problems, 1, { turns: 2, maxNewTokens: 120 });
      const running = runRollouts(stack.client, requests);
      const start = (await vllm.metrics()).generatedTokens;
      await until(async () => (await vllm.metrics()).generatedTokens - start >= 100, 60_000);
      // Down for as long as a start takes (over a minute): a worker that kept polling would burn retries (1 s, 2 s, 4 s...).
      await vllm.kill();
      const down = Date.now();
      // The server comes back with the newest checkpoint, as a restarted host loads it (the worker does not reload
      // it), under that directory's name: the backend must notice the served model changed.
      vllm = await startVllm({ port: vllm.port, model: POLICY_MODELS[1] });
      console.log(`vLLM restarted after ${((Date.now() - down) / 1000).toFixed(0)} s down`);
      const results = await running;
      for (const result of results) if (result.status !== 'completed') console.log(result);

      expect(results.map((r) => r.status)).toEqual(problems.map(() => 'completed'));
      const rows = await stack.exported('restart/');
      expect(rows).toHaveLength(4);
      for (const row of rows) {
        expect(row.seqlens).toHaveLength(2);
        expectSeedInvariants(row, stack.tokenizer);
      }
      // The attempt cut by the crash fails once; the next waits in the queue until the server is healthy again. Once
      // it is back, an attempt may still end twice for reasons of the new server, not of its downtime: a request to the
      // old model name, and the watcher's reload of the current version onto the restarted server (tag "default"),
      // which aborts what is in flight. A worker polling while the server was down (backoff 1 s, 2 s, 4 s… over the
      // 30–70 s a start takes) would burn five or more.
      for (const request of requests) {
        const history = await stack.client.workflow.getHandle(request.trajectoryId).fetchHistory();
        const attempts = (history.events ?? [])
          .filter((e) => e.activityTaskStartedEventAttributes)
          .map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1);
        expect(Math.max(...attempts)).toBeLessThanOrEqual(4);
      }
    },
  );
});

/** The attempt of the trajectory's (one) generate activity that completed: history keeps the last attempt's start. */
async function completedAttempt(trajectoryId: string): Promise<number> {
  const events = (await stack.client.workflow.getHandle(trajectoryId).fetchHistory()).events ?? [];
  const started = events.filter(
    (e) =>
      e.activityTaskStartedEventAttributes &&
      events.some((c) => Number(c.activityTaskCompletedEventAttributes?.startedEventId) === Number(e.eventId)),
  );
  if (started.length !== 1) throw new Error(`${trajectoryId}: expected one completed generate activity, found ${started.length}`);
  return started[0]!.activityTaskStartedEventAttributes!.attempt ?? 1;
}

/** A GPU worker in its own process (the built CLI) against the vLLM server, so it can be SIGKILLed. */
function spawnGpuWorker(env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'worker', 'gpu'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      DATABASE_URL: stack.databaseUrl,
      RATCHET_POLICY_URL: vllm.url,
      RATCHET_POLICY_BACKEND: 'vllm',
      RATCHET_HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS),
      RATCHET_GPU_SLOTS: '8',
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

/** A free port whose next one is free too: the worker's SDK exporter takes RATCHET_METRICS_ADDRESS's port + 1. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65_535 && !(await isListening(port + 1))) return port;
  }
}

/** Tokens the inference server has streamed to a GPU worker process, from its own /metrics. */
async function tokensReceived(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(15_000) })).text();
  const line = text.split('\n').find((l) => l.startsWith('ratchet_policy_tokens_received_total '));
  if (!line) throw new Error("the GPU worker's /metrics has no ratchet_policy_tokens_received_total");
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** The server's generated-token count since `start`, once two reads a second apart agree (it is updated in bursts). */
async function settledCount(start: number): Promise<number> {
  let last = (await vllm.metrics()).generatedTokens;
  for (let read = 0; read < 30; read++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = (await vllm.metrics()).generatedTokens;
    if (now === last) return now - start;
    last = now;
  }
  throw new Error("the server's generated-token count kept changing for 30 s with nothing running");
}

/** Greedy tokens for a fixed prompt: the same weights always answer the same. */
async function greedyProbe(): Promise<number[]> {
  const ids: number[] = [];
  await new VllmBackend(vllm.url).generate(
    {
      inputIds: [151644, 872, 198, 17, 10, 17, 151645],
      maxNewTokens: 8,
      sampling: { ...DEFAULT_SAMPLING, temperature: 0 },
      requestId: `probe-${Date.now()}`,
    },
    (chunk) => ids.push(...chunk.ids),
  );
  return ids;
}

async function untilIdle(): Promise<void> {
  await until(async () => (await vllm.metrics()).running === 0, 30_000);
}

/** Ends a wait at once: the process it waited on is gone. */
class WorkerExited extends Error {}

/** A check that fails is not met yet, unless its worker exited. */
function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return pollUntil(condition, { what: String(condition), timeoutMs, fatal: (error) => error instanceof WorkerExited });
}

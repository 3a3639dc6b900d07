import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { startVllm, stopStartedServers, type RunningVllm } from '../../src/stack/vllm-server.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { expectSeedInvariants, expectTokenVersions } from '../../scripts/support/seed-invariants.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';

// Turn affinity (issue 27) against two real CPU vLLMs with prefix caching: the same multi-turn trajectories run once
// with every turn on the shared GPU queue (`turnAffinity: false`) and once with each turn sent to the server of the
// turn before, and each server's own prefix-cache counters say how much of the later turns' prompts was cached.
//
// Block size 32 instead of the CPU backend's 128: vLLM caches (and counts hits in) whole blocks, and these
// conversations are a few hundred tokens, so 128-token blocks would make the hit rates mostly rounding.
const BLOCK = 32;
const SERVER_ARGS = ['--enable-prefix-caching', '--block-size', String(BLOCK)];
// Enough later turns that chance placement on the shared queue cannot come near affinity (see the last test).
const TRAJECTORIES = 12;
const TURNS = 4;
// The tiny random model never answers right and almost never samples EOS, so every turn runs to this length.
const MAX_NEW_TOKENS = 96;
// vLLM's --max-num-seqs in startVllm: the worker takes no more turns than its server batches.
const SLOTS = 8;

interface Counters {
  queries: number;
  hits: number;
  running: number;
  finished: number;
}

interface Phase {
  name: string;
  /** Prompt tokens of turns ≥ 2 (second turn on): what the servers looked up in their caches for them. */
  laterQueries: number;
  /** Lower and upper bounds of the cached tokens of turns ≥ 2 (see `turnZeroHitBound`). */
  laterHits: { min: number; max: number };
  /** What a server that had run all of the trajectory's earlier turns would have had cached. */
  idealHits: number;
  /** Of turns ≥ 2, the fraction that ran on the server of the turn before (from the workflows' histories). */
  sameServer: number;
  /** What the turns ≥ 2 hit, worked out from the tokens and from where each turn ran (`expectedLaterHits`). */
  expectedHits: number;
}

let stack: TestStack;
let servers: RunningVllm[] = [];
const phases: Record<'shared' | 'affinity', Phase | undefined> = { shared: undefined, affinity: undefined };

// One Temporal + Postgres, two vLLMs started side by side, one CPU worker and a GPU worker per server, each server
// with its own task queue (serverName). afterAll stops every vLLM this process started, by its process group, even
// one still starting when beforeAll failed (stopStartedServers).
beforeAll(async () => {
  stack = await startTestStack();
  servers = await Promise.all([startVllm({ extraArgs: SERVER_ARGS }), startVllm({ extraArgs: SERVER_ARGS })]);
  await stack.startWorkers({ gpu: false });
  for (const [i, server] of servers.entries()) {
    await stack.startWorkers({ cpu: false, backend: new VllmBackend(server.url), slots: SLOTS, serverName: `affinity-test/server-${i}` });
  }
  // Each GPU worker's start-up logprob probe sends its server six one-token requests of a 5-token prompt (no whole
  // block, so no hits, but queries): wait for them, so that no phase counts them.
  for (const server of servers) await until(async () => (await counters(server)).finished >= 6, 120_000, `${server.url}'s logprob probe`);
});

afterAll(async () => {
  await stopStartedServers();
  await stack?.stop();
});

describe('turn affinity on two real vLLMs with prefix caching', () => {
  it('runs the trajectories with every turn on the shared queue', { timeout: 240_000 }, async () => {
    phases.shared = await runPhase('shared', false);
  });

  it('runs the same trajectories with each turn on the server of the turn before', { timeout: 240_000 }, async () => {
    const phase = (phases.affinity = await runPhase('affinity', true));
    // The worker of the turn before had free slots, so a turn fell back to the shared queue only if its attempt failed
    // (a loaded machine): every later turn hit all that its trajectory's history can on the server that ran it
    // (runPhase checks the counters against it; nothing is evicted from a 1 GiB cache, millions of tokens of this model).
    expect(phase.sameServer).toBeGreaterThanOrEqual(0.9);
  });

  it("caches far more of the later turns' prompts with affinity than without", () => {
    const { shared, affinity } = phases;
    if (!shared || !affinity) throw new Error('a phase failed: nothing to compare');
    expect(affinity.laterQueries).toBe(shared.laterQueries);
    // The shared phase's upper bound against the affinity phase's lower bound.
    const sharedRate = shared.laterHits.max / shared.laterQueries;
    const affinityRate = affinity.laterHits.min / affinity.laterQueries;
    const sharedMisses = shared.laterQueries - shared.laterHits.max;
    const affinityMisses = affinity.laterQueries - affinity.laterHits.min;
    console.log(
      `turn affinity on 2 vLLMs: later-turn prefix-cache hit rate ${pct(affinityRate)} with affinity, ${pct(sharedRate)} without ` +
        `(×${(affinityRate / sharedRate).toFixed(2)}); prompt tokens recomputed ${affinityMisses} with, ${sharedMisses} without (×${(sharedMisses / affinityMisses).toFixed(2)} fewer)`,
    );
    // With affinity every later turn ran on its previous turn's server; on the shared queue some did not (and
    // runPhase checked that each phase's hits are exactly what its placement gives).
    expect(affinity.sameServer).toBeGreaterThan(shared.sameServer);
    // Not "twice the hit rate": with two servers about half of the shared queue's later turns land on the previous
    // turn's server by chance (two runs here: 67%, 53%) and hit as much as with affinity, and the rest still find an
    // older turn's prefix on the other server, so the shared hit rate is well over half of the affinity one (×1.29
    // and ×1.74 measured). What affinity saves is the recomputed prompt: with affinity a later turn recomputes only
    // its new tokens (the feedback and the unfinished last block), without it a moved turn recomputes the history its
    // server lacks (×2.46 and ×3.76 measured). Asserted at ×1.5: a simulation of the placement with these tokens
    // (each later turn on the previous server with probability 0.67, 0.75, 0.8) falls below it in <0.1%, 0.6%, 4%
    // of runs. The ratio is a matter of how many later turns the shared queue moved, so ×1.5 is asserted only where it
    // moved at least a third of them; where chance kept more in place (a CI run: 77.8% kept, ×1.34 measured) affinity
    // must still recompute strictly less.
    expect(sharedMisses).toBeGreaterThan(affinityMisses);
    if (shared.sameServer <= 2 / 3) expect(sharedMisses).toBeGreaterThanOrEqual(1.5 * affinityMisses);
    expect(affinityRate).toBeGreaterThan(sharedRate);
  });
});

/**
 * One run of the trajectories, measured by the servers' counters. The caches are emptied first, so nothing a
 * phase finds cached was computed before it.
 *
 * What turns ≥ 2 hit is the phase's hits less what the first turns hit. A first turn's prompt can only hit blocks
 * that another trajectory computed in the same phase (the caches were emptied; the probe's 5-token prompts fill no
 * block), and only as many whole blocks as it shares with one of them from its start: the chat template's few
 * tokens, less than a block here. `turnZeroHitBound` computes that bound exactly from the stored tokens, so the
 * later turns' hits lie in [hits − bound, hits]; with distinct problems the bound is 0 and the split is exact.
 */
async function runPhase(name: 'shared' | 'affinity', turnAffinity: boolean): Promise<Phase> {
  for (const server of servers) {
    await until(async () => (await counters(server)).running === 0, 60_000, `${server.url} to be idle`);
    const reset = await fetch(`${server.url}/reset_prefix_cache`, { method: 'POST', signal: AbortSignal.timeout(30_000) });
    expect(await reset.json()).toEqual({ success: true });
  }
  const before = await Promise.all(servers.map(settled));
  const problems = stack.problems.slice(0, TRAJECTORIES);
  expect(new Set(problems.map((p) => p.problem)).size).toBe(TRAJECTORIES);
  const started = Date.now();
  const results = await runRollouts(
    stack.client,
    trajectoryRequests(name, problems, 1, { turns: TURNS, maxNewTokens: MAX_NEW_TOKENS, turnAffinity }),
  );
  const seconds = (Date.now() - started) / 1000;
  expect(results.map((r) => r.status)).toEqual(problems.map(() => 'completed'));

  const rows = await stack.exported(`${name}/`);
  expect(rows).toHaveLength(TRAJECTORIES);
  for (const row of rows) {
    const problem = problems.find((p) => row.trajectory_id === `${name}/${p.qid}/0`)!;
    expect(row.packed_prompts).toEqual(promptIds(stack.tokenizer, problem.problem));
    expect(row.seqlens).toHaveLength(TURNS);
    expectSeedInvariants(row, stack.tokenizer);
    expectTokenVersions(row);
  }
  const queries = sum(rows.flatMap((row) => row.prompt_lens));
  const firstQueries = sum(rows.map((row) => row.prompt_lens[0]!));
  // The counters lag the engine by up to a stats interval: wait until they show every turn's prompt.
  await until(
    async () => sum((await Promise.all(servers.map(counters))).map((c, i) => c.queries - before[i]!.queries)) >= queries,
    30_000,
    'the counters to show the phase',
  );
  const after = await Promise.all(servers.map(settled));
  const delta = after.map((c, i) => ({ queries: c.queries - before[i]!.queries, hits: c.hits - before[i]!.hits }));
  // Every turn's prompt reached the servers; a loaded machine adds a few more requests (a retried turn, a GPU worker's
  // logprob probe when its health check flapped), which may hit too: their prompt tokens widen the bounds below.
  const extra = sum(delta.map((d) => d.queries)) - queries;
  expect(extra).toBeGreaterThanOrEqual(0);

  const hits = sum(delta.map((d) => d.hits));
  const bound = turnZeroHitBound(rows) + extra;
  const laterQueries = queries - firstQueries;
  const placements = await Promise.all(rows.map((row) => servedBy(row.trajectory_id)));
  const later = placements.flatMap((queues) => queues.slice(1).map((queue, i) => queue === queues[i]));
  const phase: Phase = {
    name,
    laterQueries,
    laterHits: { min: hits - bound, max: hits },
    idealHits: sum(
      rows.map((row) =>
        expectedLaterHits(
          row,
          row.seqlens.map(() => 'one server'),
        ),
      ),
    ),
    sameServer: later.filter(Boolean).length / later.length,
    expectedHits: sum(rows.map((row, i) => expectedLaterHits(row, placements[i]!))),
  };
  const rate =
    phase.laterHits.min === phase.laterHits.max ? pct(hits / laterQueries) : `${pct(phase.laterHits.min / laterQueries)}–${pct(hits / laterQueries)}`;
  console.log(
    `turn affinity ${name === 'affinity' ? 'on ' : 'off'}: ${TRAJECTORIES}×${TURNS} turns in ${seconds.toFixed(0)} s; turns ≥ 2: prefix-cache hit rate ${rate} ` +
      `(${hits - bound}${bound ? `–${hits}` : ''} of ${laterQueries} prompt tokens; a server holding all earlier turns: ${pct(phase.idealHits / laterQueries)}), ` +
      `${pct(phase.sameServer)} on the previous turn's server; first turns: ${firstQueries} tokens, at most ${bound} hits; ` +
      `per server queries/hits ${delta.map((d) => `${d.queries}/${d.hits}`).join(', ')}; ${extra} prompt tokens of other requests`,
  );
  // The counters are what the turns' placement says to the token: each later turn hit the blocks its server had
  // computed for the trajectory's earlier turns, and nothing else (the first turns hit at most `bound`).
  expect(hits - phase.expectedHits).toBeGreaterThanOrEqual(0);
  expect(hits - phase.expectedHits).toBeLessThanOrEqual(bound);
  return phase;
}

/**
 * The most the first turns can have hit: each first prompt's whole blocks in common, from its start, with another
 * trajectory's tokens (every sequence of a trajectory starts with its first, so its longest covers them all),
 * short of the prompt's last token (vLLM always computes it).
 */
function turnZeroHitBound(rows: readonly ExportedTrajectory[]): number {
  return sum(
    rows.map((row) => {
      const prompt = row.packed_input_ids.slice(0, row.prompt_lens[0]);
      const shared = Math.max(0, ...rows.filter((other) => other !== row).map((other) => commonPrefix(prompt, lastSequence(other))));
      return blocks(Math.min(shared, prompt.length - 1));
    }),
  );
}

/**
 * Hits of turns ≥ 2 given the server each turn ran on (`queues`, one per turn): on its server, a turn finds the
 * whole blocks of the longest earlier sequence of the trajectory that ran there (every earlier sequence is a prefix
 * of its prompt), less the sequence's last sampled token, whose KV was never computed, and short of the prompt's own
 * last token. The first turns' hits are `turnZeroHitBound`'s.
 */
function expectedLaterHits(row: ExportedTrajectory, queues: readonly string[]): number {
  const sequences = sequencesOf(row);
  return sum(
    sequences.slice(1).map((sequence, i) => {
      const turn = i + 1;
      const prompt = sequence.slice(0, row.prompt_lens[turn]);
      const cached = Math.max(
        0,
        ...sequences
          .slice(0, turn)
          .filter((_, u) => queues[u] === queues[turn])
          .map((earlier) => Math.min(commonPrefix(prompt, earlier), earlier.length - 1)),
      );
      return blocks(Math.min(cached, prompt.length - 1));
    }),
  );
}

/** The seed layout packs each turn's whole sequence (its context, then its output) one after another. */
function sequencesOf(row: ExportedTrajectory): number[][] {
  let offset = 0;
  return row.seqlens.map((length) => row.packed_input_ids.slice(offset, (offset += length)));
}

function lastSequence(row: ExportedTrajectory): number[] {
  return sequencesOf(row).at(-1)!;
}

/** The task queue of the worker that generated each turn: each generate activity's result names it. */
async function servedBy(trajectoryId: string): Promise<string[]> {
  const events = (await stack.client.workflow.getHandle(trajectoryId).fetchHistory()).events ?? [];
  const generates = new Set(
    events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'generate').map((e) => Number(e.eventId)),
  );
  const queues = events
    .filter((e) => e.activityTaskCompletedEventAttributes && generates.has(Number(e.activityTaskCompletedEventAttributes.scheduledEventId)))
    .map(
      (e) =>
        (JSON.parse(Buffer.from(e.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString('utf8')) as { affinityQueue?: string })
          .affinityQueue,
    );
  expect(queues).toHaveLength(TURNS);
  for (const queue of queues) expect(queue).toMatch(/^.*affinity-test\/server-[01]$/);
  return queues as string[];
}

/** vLLM's prefix-cache counters (tokens), running gauge and finished-request count, summed over their labels. */
async function counters(server: RunningVllm): Promise<Counters> {
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const total = (name: string) => {
    const lines = text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    if (lines.length === 0) throw new Error(`vLLM /metrics has no ${name}`);
    return sum(lines.map((l) => Number(l.slice(l.lastIndexOf(' ') + 1))));
  };
  return {
    queries: total('vllm:prefix_cache_queries_total'),
    hits: total('vllm:prefix_cache_hits_total'),
    running: total('vllm:num_requests_running'),
    finished: total('vllm:request_success_total'),
  };
}

/** The counters once two reads a second apart agree (vLLM updates them in bursts) with nothing running. */
async function settled(server: RunningVllm): Promise<Counters> {
  let last = await counters(server);
  for (let read = 0; read < 30; read++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = await counters(server);
    if (now.running === 0 && now.queries === last.queries && now.hits === last.hits) return now;
    last = now;
  }
  throw new Error(`${server.url}'s prefix-cache counters kept changing for 30 s`);
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function blocks(tokens: number): number {
  return Math.floor(Math.max(0, tokens) / BLOCK) * BLOCK;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function pct(rate: number): string {
  return `${(100 * rate).toFixed(1)}%`;
}

function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<boolean> {
  return pollUntil(condition, { what, timeoutMs, intervalMs: 250 });
}

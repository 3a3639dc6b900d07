import { readFile } from 'node:fs/promises';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStoredMetrics } from '../../src/metrics/stored-metrics.js';
import { persistTrajectoryActivity } from '../../src/activities/persist.js';
import { runCurves } from '../../src/store/read/run-curves.js';
import { recentTurnLatency, TURN_LATENCY } from '../../src/store/read/turn-latency.js';
import { savePrompt, saveTurnOutput, saveVerdictAndFeedback } from '../../src/store/write/turn-store.js';
import { curveCharts } from '../../src/ui/curve-charts.js';
import { startTestDatabase, type TestDatabase } from './test-database.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { uiApp } from '../../src/ui/app.js';
import { conversationText } from '../../src/ui/conversation-text.js';
import { loadTrajectoryDetails } from '../../src/ui/trajectory-details.js';

// Migration 018 (issue 35): each turn's queue, generate and verify time, written in the statements that already write the
// turn, carried into monitor_records by persist, and read by one definition (ratchet_turn_latency) per time bucket.
let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

/** A trajectory run through the activities' writes: each turn's [queue, generate, verify] ms (a retry's replace the first). */
async function timedTrajectory(trajectoryId: string, timings: [number, number, number][]): Promise<void> {
  await savePrompt(db.pool, trajectoryId, [1, 2], 'prompt');
  const turns = [];
  for (const [turn, [queueMs, generateMs, verifyMs]] of timings.entries()) {
    const contextLen = 2 + 4 * turn;
    const output = {
      trajectoryId,
      turn,
      contextLen,
      outputIds: [3, 3, 3],
      outputLogprobs: [-1, -1, -1],
      outputVersions: [0, 0, 0],
      finishReason: 'stop' as const,
      versionStart: 0,
      versionEnd: 0,
    };
    await saveTurnOutput(db.pool, { ...output, attempt: 1, queueMs: 99_999, generateMs: 99_999 });
    await saveTurnOutput(db.pool, { ...output, attempt: 2, queueMs, generateMs });
    await saveVerdictAndFeedback(
      db.pool,
      trajectoryId,
      turn,
      { answerText: '4', extracted: '4', status: 'wrong' },
      { ids: [4], text: 'no' },
      undefined,
      verifyMs,
    );
    turns.push({
      turn,
      contextLen,
      outputLen: 3,
      finishReason: 'stop' as const,
      versionStart: 0,
      versionEnd: 0,
      verdict: 'wrong',
      success: false,
      feedbackLen: 1,
    });
  }
  await persistTrajectoryActivity(db.pool)({
    trajectoryId,
    qid: 'q',
    birthTime: Date.now() - 5_000,
    layout: 'seed',
    turns,
    rewards: turns.map(() => -1),
    rawRewards: turns.map(() => -1),
  });
}

/** A trajectory stored before migration 018 (no timings), `minutesAgo`. */
async function untimedTrajectory(trajectoryId: string, minutesAgo: number): Promise<void> {
  await db.pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, version_start, version_end, rewards, raw_rewards, successes, finished_at)
     VALUES ($1, 'q', 'completed', 'seed', 1, 0, '{0}', '{0}', '{-1}', '{-1}', '{f}', date_trunc('minute', now()) - make_interval(mins => $2))`,
    [trajectoryId, minutesAgo],
  );
  await db.pool.query(
    `INSERT INTO monitor_records (trajectory_id, turn, qid, version_start, version_end, success, verdict, prompt_len, answer_len) VALUES ($1, 0, 'q', 0, 0, false, 'wrong', 2, 3)`,
    [trajectoryId],
  );
}

describe("a turn's timings", () => {
  it("are stored by the generate and environment step writes (the newest attempt's) and carried into monitor_records by persist", async () => {
    await timedTrajectory('timed/q/0', [
      [120, 2_000, 30],
      [80, 1_500, -5],
    ]);
    const { rows } = await db.pool.query(
      "SELECT turn, queue_ms, generate_ms, verify_ms FROM monitor_records WHERE trajectory_id = 'timed/q/0' ORDER BY turn",
    );
    // A negative duration (clock skew) is stored as 0.
    expect(rows).toEqual([
      { turn: 0, queue_ms: 120, generate_ms: 2_000, verify_ms: 30 },
      { turn: 1, queue_ms: 80, generate_ms: 1_500, verify_ms: 0 },
    ]);
  });

  it('are shown with each turn on the trajectory page and in `ratchet show`, each named with its definition; none for turns stored without', async () => {
    await timedTrajectory('shown/q/0', [
      [120, 2_000, 30],
      [80, 61_400, 950],
    ]);
    await untimedTrajectory('shown/q/old', 30);
    const tokenizer = await loadModelTokenizer();
    const app = uiApp({ pool: db.pool, tokenizer, assets: new Map() });
    const page = await (await app.request(`/trajectories/${encodeURIComponent('shown/q/0')}`)).text();
    const shown = [...page.matchAll(/ · (queue|generate|verify) <span class="turn-\1" title="([^"]*)">([^<]*)<\/span>/g)];
    expect(shown.map((m) => [m[1], m[3]])).toEqual([
      ['queue', '120 ms'],
      ['generate', '2.00 s'],
      ['verify', '30 ms'],
      ['queue', '80 ms'],
      ['generate', '1 min 1 s'],
      ['verify', '950 ms'],
    ]);
    expect(shown[1]![2]).toBe(TURN_LATENCY.generate.replaceAll("'", '&#39;'));
    const text = conversationText(await loadTrajectoryDetails(db.pool, tokenizer, undefined, 'shown/q/0'));
    expect(text).toContain('· queue 80 ms · generate 1 min 1 s · verify 950 ms');
    const old = await (await app.request(`/trajectories/${encodeURIComponent('shown/q/old')}`)).text();
    expect(old).not.toContain('class="turn-queue"');
  });

  it("give each bucket of the throughput chart p50/p95 of its turns, a bucket of untimed turns a gap and never 0; runs status and /metrics the run's newest", async () => {
    await untimedTrajectory('mixed/q/old', 30);
    for (const [i, generateMs] of [1_000, 2_000, 3_000, 4_000].entries()) await timedTrajectory(`mixed/q/${i}`, [[i * 10, generateMs, 100]]);
    const curves = await runCurves(db.pool, 'mixed');
    expect(curves.overTime.length).toBeGreaterThanOrEqual(2);
    const old = curves.overTime[0]!;
    const latest = curves.overTime.at(-1)!;
    expect(old.samples).toBe(1);
    expect(old.latency).toEqual({
      queue: { turns: 0, p50: null, p95: null },
      generate: { turns: 0, p50: null, p95: null },
      verify: { turns: 0, p50: null, p95: null },
    });
    // percentile_cont over 1,000..4,000 ms: p50 2,500, p95 3,850.
    expect(latest.latency.generate).toEqual({ turns: 4, p50: 2_500, p95: 3_850 });
    expect(latest.latency.queue).toEqual({ turns: 4, p50: 15, p95: 28.5 });
    expect(latest.latency.verify).toEqual({ turns: 4, p50: 100, p95: 100 });

    const chart = curveCharts(curves, []).find((c) => c.id === 'chart-generate-latency-over-time')!;
    expect(chart.title).toContain("generate: that attempt's generation");
    expect(chart.y[0]![0]).toBeNull();
    expect(chart.y[0]!.at(-1)).toBe(2.5);
    expect(chart.y[1]!.at(-1)).toBe(3.85);
    expect(chart.empty).toBeUndefined();

    expect((await recentTurnLatency(db.pool, 'mixed')).generate).toEqual({ turns: 4, p50: 2_500, p95: 3_850 });
    const registry = new Registry();
    await registerStoredMetrics(registry, db.pool)();
    const text = await registry.metrics();
    expect(text).toContain('ratchet_turn_latency_seconds{run="mixed",phase="generate",quantile="0.5"} 2.5');
    expect(text).toContain('ratchet_turn_latency_seconds{run="mixed",phase="generate",quantile="0.95"} 3.85');
    expect(text.split('\n').find((line) => line.startsWith('# HELP ratchet_turn_latency_seconds'))).toContain(TURN_LATENCY.queue);

    // The Python client's run_status reads the very same function (psycopg's %s as $1).
    const python = await readFile(new URL('../../python/ratchet_rollouts/store.py', import.meta.url), 'utf8');
    const sql = /await cursor\.execute\("(SELECT \* FROM ratchet_turn_latency\(%s\))"/.exec(python)![1]!.replaceAll('%s', '$1');
    const {
      rows: [row],
    } = await db.pool.query(sql, ['mixed']);
    expect([row.generate_turns, row.generate_p50]).toEqual(['4', 2_500]);
  });

  it("is read once for a bucket that closed over 5 minutes ago: the page's poll reads only the buckets still filling", async () => {
    await untimedTrajectory('polled/q/old', 30);
    await timedTrajectory('polled/q/new', [[5, 50, 5]]);
    const asked: number[][] = [];
    const spied = new Proxy(db.pool, {
      get(target, name, receiver) {
        if (name !== 'query') return Reflect.get(target, name, receiver);
        return (sql: string, params?: unknown[]) => {
          if (typeof sql === 'string' && sql.includes('ratchet_turn_latency')) asked.push(params![1] as number[]);
          return target.query(sql, params);
        };
      },
    });
    const first = await runCurves(spied, 'polled');
    const second = await runCurves(spied, 'polled');
    expect(second.overTime).toEqual(first.overTime);
    const buckets = first.overTime.map((p) => p.time);
    expect(asked[0]).toEqual(buckets);
    expect(asked[1]).toEqual([buckets.at(-1)]);
  });

  it('of a run with none timed: the latency charts say why they are empty', async () => {
    await untimedTrajectory('untimed/q/0', 0);
    const curves = await runCurves(db.pool, 'untimed');
    const chart = curveCharts(curves, []).find((c) => c.id === 'chart-queue-latency-over-time')!;
    expect(chart.empty).toContain('keep no timings');
    expect((await recentTurnLatency(db.pool, 'untimed')).queue).toEqual({ turns: 0, p50: null, p95: null });
  });
});

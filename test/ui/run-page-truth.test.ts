import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgeBatch, claimBatch } from '../../src/store/write/batches.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import { admitGroups } from '../../src/store/write/rollout-groups.js';
import { claimTurnCheckpoint } from '../../src/store/write/turn-checkpoints.js';
import { savePrompt } from '../../src/store/write/turn-store.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { uiApp } from '../../src/ui/app.js';
import { FALLBACK_ATTEMPT_BASE } from '../../src/workflows/turn-affinity.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { complete, fail, joinedGroup } from '../store/run-rows.js';
import type { StoredVerdict } from '../../src/trajectory/turn-verdicts.js';

// Issue 35: every number the run pages show means what its label says. One Postgres, rows written as the activities
// write them, pages read through the UI's routes.
let db: TestDatabase;
let app: Hono;

/** A training run at η = 0 whose two groups were generated under version 0 and handed out under version 1. */
const STALE_RUN = { runId: 'stale', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 8 };

beforeAll(async () => {
  db = await startTestDatabase();
  app = uiApp({ pool: db.pool, tokenizer: await loadModelTokenizer(), assets: new Map() });
  const members = [...(await joinedGroup(db.pool, STALE_RUN, 'a', 2)), ...(await joinedGroup(db.pool, STALE_RUN, 'b', 2))];
  await admitGroups(db.pool, STALE_RUN.runId);
  for (const id of members) await complete(db.pool, id, ['wrong', 'correct']);
  await publishPolicyVersion(db.pool, 1);
  // Group a's batch is acknowledged; group b's lease runs out unacknowledged.
  const acked = await claimBatch(db.pool, { runId: STALE_RUN.runId, batchSize: 1, consumer: 'test', leaseMs: 60_000 });
  await acknowledgeBatch(db.pool, acked!.batchId);
  await claimBatch(db.pool, { runId: STALE_RUN.runId, batchSize: 1, consumer: 'test', leaseMs: 1 });
  await new Promise((resolve) => setTimeout(resolve, 20));
});

afterAll(async () => {
  await db?.stop();
});

const text = async (path: string, status = 200) => {
  const response = await app.request(path);
  const body = await response.text();
  expect(response.status, body.slice(0, 300)).toBe(status);
  return body;
};

/** The cells of the table row that links to `id`, tags stripped. */
const rowCells = (page: string, id: string) => {
  const row = page.split('<tr').find((r) => r.includes(`href="/trajectories/${encodeURIComponent(id)}"`)) ?? '';
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
};

describe("the live page's attempt column", () => {
  it('shows the attempt a person counts, never the fencing offset of a turn that fell back', async () => {
    // Three turns generating: one on its first attempt, one on the shared queue's first attempt after falling back
    // from its server's queue (stored as 101), one retried twice there (103).
    for (const [id, stored] of [
      ['live/q/0', 1],
      ['live/q/1', FALLBACK_ATTEMPT_BASE + 1],
      ['live/q/2', FALLBACK_ATTEMPT_BASE + 3],
    ] as const) {
      await savePrompt(db.pool, id, [1, 2], 'prompt');
      if (stored > 1) await claimTurnCheckpoint(db.pool, { trajectoryId: id, turn: 0, attempt: 1 });
      await claimTurnCheckpoint(db.pool, { trajectoryId: id, turn: 0, attempt: stored });
    }
    const page = await text('/live');
    // trajectory, phase, turn, tokens, attempt, idle, flag
    expect(rowCells(page, 'live/q/0')[4]).toBe('1');
    expect(rowCells(page, 'live/q/1')[4]).toBe('1 after fallback');
    expect(rowCells(page, 'live/q/1')[6]).toBe('');
    expect(rowCells(page, 'live/q/2')[4]).toBe('3 after fallback');
    expect(rowCells(page, 'live/q/2')[6]).toBe('retried');
    expect(page).not.toMatch(/>10[1-3]</);
  });
});

interface RunJson {
  counters: Record<string, number>;
  charts: { id: string; title: string; series: string[]; y: (number | null)[][] }[];
}

describe('one definition of stale on the run page', () => {
  it('gives the same count in the counter, the staleness histogram right of η and the stale filter, expired batches included', async () => {
    const view = (await (await app.request('/api/runs/stale')).json()) as RunJson;
    // Both groups' 4 members were over η when last handed out; only the acknowledged batch's 2 were consumed.
    expect(view.counters.staleAtHandOut).toBe(4);
    expect(view.counters.staleTrajectories).toBe(2);
    const histogram = view.charts.find((chart) => chart.id === 'chart-staleness')!;
    const staleBars = histogram.y[histogram.series.indexOf('stale (over η)')]!;
    expect(staleBars.reduce<number>((sum, n) => sum + (n ?? 0), 0)).toBe(4);
    expect(histogram.title).toContain('over η = 0');
    const page = await text('/runs/stale?stale=1');
    expect(page).toMatch(/id="trajectory-total"[^>]*>4</);
    expect(page).toMatch(/stale at hand-out<b data-counter="staleAtHandOut">4</);
    // The definition is named where the number is shown.
    expect(page).toMatch(
      /title="Trajectories over the run(&#39;|')s staleness bound η \(max_head_offpolicyness\) at their latest hand-out, in any batch/,
    );
  });
});

describe('the problems page', () => {
  it('counts cancelled samples as never attempted: not in samples, failures, pass rate or mean return', async () => {
    // Problem p1: one sample solved, one wrong, one cancelled with its group; problem p2: both samples cancelled.
    await complete(db.pool, 'problems/p1/0', ['correct']);
    await complete(db.pool, 'problems/p1/1', ['wrong']);
    await fail(db.pool, 'problems/p1/2', 'GroupCancelled', 'infrastructure');
    await fail(db.pool, 'problems/p2/0', 'Cancelled', 'infrastructure');
    await fail(db.pool, 'problems/p2/1', 'GroupCancelled', 'infrastructure');
    await fail(db.pool, 'problems/p3/0', 'PolicyUnavailable', 'infrastructure');
    const page = await text('/runs/problems/problems?sort=qid&dir=asc');
    const cells = (qid: string) => {
      const row = page.split('<tr').find((r) => r.includes(`data-qid="${qid}"`)) ?? '';
      return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
    };
    // qid, samples, pass at turn 1, pass any turn, mean return, failed, cancelled
    expect(cells('p1').slice(0, 7)).toEqual(['p1', '2', '50.0%', '50.0%', '0.00', '0', '1']);
    expect(cells('p2').slice(0, 7)).toEqual(['p2', '0', '–', '–', '–', '0', '2']);
    // A sample that failed for another reason was attempted: it counts, as a failure.
    expect(cells('p3').slice(0, 7)).toEqual(['p3', '1', '0.0%', '0.0%', '0.00', '1', '0']);
    expect(page).toContain('cancelled samples were never attempted');
  });

  it('filters problems by part of their qid whatever its case', async () => {
    const page = await text('/runs/problems/problems?qidContains=P1');
    expect(page).toMatch(/id="problem-count">1</);
    expect(page).toContain('data-qid="p1"');
    // The search box too: problems and runs whose id contains the text, whatever its case.
    const search = await text('/search?q=P1');
    expect(search).toMatch(/id="qids-containing"[\s\S]*href="\/search\?q=p1"/);
    expect(await text('/search?q=PROBLEM')).toMatch(/id="runs-containing"[\s\S]*href="\/runs\/problems"/);
  });
});

describe('the group page', () => {
  it('shows no advantage until every sample of the group has finished, and says how many have', async () => {
    const run = { runId: 'groups', maxHeadOffpolicyness: 4, batchSize: 1, maxConcurrent: 8 };
    const [first, ...rest] = await joinedGroup(db.pool, run, 'g', 4);
    await admitGroups(db.pool, run.runId);
    await complete(db.pool, first!, ['correct']);
    const partial = await text(`/groups/${encodeURIComponent('groups/g')}`);
    const advantages = (page: string) => [...page.matchAll(/class="advantage">([^<]*)</g)].map((m) => m[1]);
    expect(advantages(partial)).toEqual(['pending, 1 of 4 done']);
    expect(partial).toContain('Advantages pending: 1 of 4 samples done');
    for (const [i, id] of rest.entries()) await complete(db.pool, id, [i === 0 ? 'correct' : 'wrong']);
    const whole = await text(`/groups/${encodeURIComponent('groups/g')}`);
    // Returns +1, +1, −1, −1: mean 0, std 1.
    expect(advantages(whole)).toEqual(['1.00', '1.00', '-1.00', '-1.00']);
    expect(whole).not.toContain('Advantages pending');
  });
});

describe('the verdict filter', () => {
  it("filters by a verdict only an environment gives, offered from the run's own turns, and by an unknown one to nothing", async () => {
    // An environment run: a tool call, then a correct answer; and a plain wrong answer.
    await complete(db.pool, 'tools/q1/0', ['tool_call' as StoredVerdict, 'correct']);
    await complete(db.pool, 'tools/q2/0', ['wrong']);
    const all = await text('/runs/tools');
    const select = /<select name="verdict"[\s\S]*?<\/select>/.exec(all)![0];
    expect([...select.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1])).toEqual(['', 'correct', 'tool_call', 'wrong']);
    const tool = await text('/runs/tools?verdict=tool_call');
    expect(tool).toMatch(/id="trajectory-total"[^>]*>1</);
    expect(tool).toContain('tools/q1/0');
    expect(tool).not.toContain(`href="/trajectories/${encodeURIComponent('tools/q2/0')}"`);
    // A verdict no turn has matches nothing; it never falls back to every row.
    expect(await text('/runs/tools/trajectories?verdict=timeout')).toMatch(/id="trajectory-total"[^>]*>0</);
    expect(await text('/runs/tools/trajectories?verdict=%3Cscript%3E')).toMatch(/id="trajectory-total"[^>]*>0</);
  });
});

describe('an id that names no run', () => {
  it('is a 404 saying what was not found, on the page, its parts and what it polls', async () => {
    await complete(db.pool, 'real/q/0', ['correct']);
    const missing = await text('/runs/rael', 404);
    expect(missing).toContain('No run rael: nothing was submitted under this name.');
    // It waits a bounded while for a run of that name to appear (one about to be submitted), then stops asking.
    expect(missing).toContain('RatchetUI.awaitRun("rael", 10);');
    expect(await text('/runs/rael/problems', 404)).toContain('No run rael');
    expect(await text('/runs/rael/trajectories', 404)).toContain('No run rael');
    const polled = await app.request('/api/runs/rael');
    expect(polled.status).toBe(404);
    expect(await polled.json()).toEqual({ error: 'No run rael: nothing was submitted under this name.' });
    // A misspelt compare target: the run exists, the one to compare with does not.
    const compared = await text('/runs/real?compare=rael', 404);
    expect(compared).toContain('No run rael to compare real with.');
    expect(compared).toContain('href="/runs/real"');
    expect(compared).not.toContain('awaitRun');
    expect((await app.request('/api/runs/real?compare=rael')).status).toBe(404);
    await text('/runs/real');
    await text('/runs/real?compare=tools');
  });
});

describe("the run page's headline", () => {
  it("says whether the run is learning: the newest version's success and return against the version before, self-correction, each defined", async () => {
    // Version 0: one of two problems solved. Version 1: all three solved, one only at its second turn.
    await complete(db.pool, 'learning/q0/0', ['wrong'], 0);
    await complete(db.pool, 'learning/q1/0', ['correct'], 0);
    await complete(db.pool, 'learning/q0/1', ['correct'], 1);
    await complete(db.pool, 'learning/q1/1', ['correct'], 1);
    await complete(db.pool, 'learning/q2/1', ['wrong', 'correct'], 1);
    const page = await text('/runs/learning');
    const item = (id: string) => {
      const at = page.indexOf(`id="headline-${id}"`);
      expect(at, id).toBeGreaterThan(0);
      return page
        .slice(at, page.indexOf('</div>', at))
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ');
    };
    expect(item('success')).toContain('success, any turn (v1) 1.000 +0.500 n=3');
    expect(item('first-turn-success')).toContain('success at turn 1 (v1) 0.667 +0.167 n=3');
    expect(item('policy-version')).toContain('newest policy version 1');
    // Of the turns not correct that another turn followed (q2/1's first), all were corrected.
    expect(item('self-correction')).toContain('self-correction 1.000 n=1');
    expect(item('self-correction')).toContain('P(correct at turn t+1 | not correct at turn t)');
    expect(item('success')).toContain('Trajectories whose first generated token came from policy version 1, change against version 0');
  });
});

describe('downloading the filtered list', () => {
  it("gives the rows the list's filters select, as CSV, a qid part matched whatever its case", async () => {
    const response = await app.request('/runs/learning/trajectories.csv?qidContains=Q2');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    expect(response.headers.get('x-ratchet-complete')).toBe('true');
    const [header, ...rows] = (await response.text()).trim().split('\n');
    expect(header).toBe('trajectory_id,qid,status,turns,verdicts,correct_turns,return_r0,output_tokens,staleness,failure_type,finished_at');
    expect(rows.map((row) => row.split(',').slice(0, 6))).toEqual([['learning/q2/1', 'q2', 'completed', '2', 'wrong correct', '1']]);
    const tools = (await (await app.request('/runs/tools/trajectories.csv?verdict=tool_call')).text()).trim().split('\n');
    expect(tools.slice(1).map((row) => row.split(',')[0])).toEqual(['tools/q1/0']);
    // The list links to the download of what it shows.
    expect(await text('/runs/learning?qidContains=Q2')).toContain('href="/runs/learning/trajectories.csv?qidContains=Q2"');
  });
});

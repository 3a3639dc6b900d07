import type pg from 'pg';
import { inTransaction } from '../transaction.js';
import { SORT_KEYS, type SortKey } from '../schema/trajectory-search-sql.js';

export type { SortKey } from '../schema/trajectory-search-sql.js';

/** Filters of a run's trajectory list; each one left out matches everything. */
export interface TrajectoryFilter {
  runId: string;
  qid?: string;
  /** Part of the qid (a problem family such as `algebra/`), whatever its case. */
  qidContains?: string;
  /** Some turn had this verdict: the judges' (correct, wrong…) or an environment's own (`tool_call`…), as stored. */
  verdict?: string;
  status?: 'completed' | 'failed' | 'running';
  failureType?: string;
  /** Some turn's last token came from this policy version. */
  policyVersion?: number;
  /** Flagged stale at hand-out (over the run's staleness bound). */
  stale?: boolean;
  /** Some turn was cut off by the length limit (ended without EOS: seq_no_eos_mask). */
  truncated?: boolean;
  /** ✓ then ✗: a turn correct, then a later turn not correct (wrong, no answer, timeout…). */
  correctThenWrong?: boolean;
}

export interface TrajectoryOrder {
  sort: SortKey;
  direction: 'asc' | 'desc';
}

export interface TrajectoryListEntry {
  trajectoryId: string;
  qid: string;
  status: 'completed' | 'failed' | 'running';
  turns: number;
  successes: number;
  /** R₀; null when failed or running. */
  reward: number | null;
  /** Per turn: its verdict ('' while not judged yet). */
  verdicts: string[];
  /** Per turn: ended without EOS. */
  truncated: boolean[];
  staleness: number | null;
  failureType: string | null;
  outputTokens: number;
  finishedAt: Date | null;
}

/**
 * How many trajectories match: exact; or at least `count` (counting stops at COUNT_LIMIT rather than scan a large
 * run); or, `estimated`, the planner's estimate (the bounded count ran out of time: a rare filter on a large run).
 */
export interface ListTotal {
  count: number;
  exact: boolean;
  estimated?: boolean;
}

export interface TrajectoryPage {
  entries: TrajectoryListEntry[];
  /** The cursor of the next page (keyset: rows stored meanwhile never shift it), or null on the last page. */
  next: string | null;
  total: ListTotal;
}

export const PAGE_SIZE = 50;
/** The bounded count's limit: past it the list says "1000+" instead of scanning every matching row. */
export const COUNT_LIMIT = 1000;

/** Stored trajectories of a run, one keyset page in the chosen order, filtered, with their total. */
export async function listTrajectories(
  pool: pg.Pool,
  filter: TrajectoryFilter,
  order: TrajectoryOrder,
  after?: string,
  pageSize = PAGE_SIZE,
): Promise<TrajectoryPage> {
  if (filter.status === 'running') return { entries: [], next: null, total: { count: 0, exact: true } };
  const where = await storedConditions(pool, filter);
  const [page, total] = await Promise.all([readPage(pool, filter, order, where, after, pageSize), countStored(pool, filter, where)]);
  return { ...page, total };
}

/**
 * Pages of the same list without their total (the CSV download reads page after page: one bounded count per page
 * would cost as much again as the rows). `pageSizes` gives each page's size in turn, the last one repeating; at most
 * `limit` rows in all.
 */
export async function* trajectoryPages(
  pool: pg.Pool,
  filter: TrajectoryFilter,
  order: TrajectoryOrder,
  limit: number,
  pageSizes: readonly number[],
): AsyncGenerator<Omit<TrajectoryPage, 'total'>> {
  if (filter.status === 'running') return;
  const where = await storedConditions(pool, filter);
  let after: string | undefined;
  let rows = 0;
  for (let i = 0; rows < limit; i++) {
    const page = await readPage(pool, filter, order, where, after, Math.min(pageSizes[Math.min(i, pageSizes.length - 1)]!, limit - rows));
    rows += page.entries.length;
    yield page;
    if (!page.next) return;
    after = page.next;
  }
}

async function readPage(
  pool: pg.Pool,
  filter: TrajectoryFilter,
  order: TrajectoryOrder,
  where: Conditions,
  after: string | undefined,
  pageSize: number,
): Promise<Omit<TrajectoryPage, 'total'>> {
  const key = SORT_KEYS[order.sort];
  const cursor = decodeCursor(after, order.sort);
  const params = [...where.params];
  // Stale, newest (or oldest) first: walk the run's stale trajectories in finish order (migration 017) and read
  // only those rows, instead of walking the whole run and probing each row's member.
  const staleWalk = filter.stale === true && order.sort === 'finished';
  let condition = staleWalk ? where.beyondRun : withStale(where);
  const direction = order.direction === 'desc' ? 'DESC' : 'ASC';
  if (cursor) {
    params.push(cursor.value, cursor.trajectoryId);
    const keyed = staleWalk ? '(s.finished_at, s.trajectory_id)' : `((${key.sql}), trajectory_id)`;
    condition += ` AND ${keyed} ${order.direction === 'desc' ? '<' : '>'} ($${params.length - 1}::${key.type}, $${params.length})`;
  }
  params.push(pageSize + 1);
  const source = staleWalk
    ? `(SELECT t.* FROM run_stale_trajectories s JOIN trajectories t ON t.trajectory_id = s.trajectory_id WHERE s.run_id = $1 AND ${condition}
        ORDER BY s.finished_at ${direction}, s.trajectory_id ${direction} LIMIT $${params.length}) t`
    : where.fenced
      ? `(SELECT * FROM trajectories t WHERE ${condition} OFFSET 0) t`
      : `trajectories t WHERE ${condition}`;
  const { rows } = await pool.query(
    `WITH page AS (
         SELECT trajectory_id, qid, status, num_turns, ${SORT_KEYS.successes.sql} AS successes, rewards[1] AS reward, failure_type, output_tokens,
                finished_at, seq_no_eos_mask, (${key.sql}) AS sort_key
         FROM ${source}
         ORDER BY (${key.sql}) ${direction}, trajectory_id ${direction} LIMIT $${params.length}
       )
       SELECT p.*, sort_key::text AS sort_value,
              coalesce((SELECT array_agg(r.verdict ORDER BY r.turn) FROM monitor_records r WHERE r.trajectory_id = p.trajectory_id),
                       (SELECT array_agg(x.verdict ORDER BY x.turn) FROM turn_texts x WHERE x.trajectory_id = p.trajectory_id)) AS verdicts,
              (SELECT m.staleness FROM rollout_members m WHERE m.trajectory_id = p.trajectory_id) AS staleness
       FROM page p ORDER BY sort_key ${direction}, trajectory_id ${direction}`,
    params,
  );
  const page = rows.slice(0, pageSize);
  const last = page.at(-1);
  return {
    entries: page.map((row): TrajectoryListEntry => ({
      trajectoryId: row.trajectory_id,
      qid: row.qid,
      status: row.status,
      turns: row.num_turns,
      successes: row.successes,
      reward: row.reward,
      verdicts: row.verdicts ?? [],
      truncated: row.seq_no_eos_mask ?? [],
      staleness: row.staleness,
      failureType: row.failure_type,
      outputTokens: row.output_tokens,
      finishedAt: row.finished_at,
    })),
    next: rows.length > pageSize && last ? encodeCursor(order.sort, last.sort_value, last.trajectory_id) : null,
  };
}

/**
 * Running trajectories of a run (working rows, no stored row yet: as many as run at once, so reading them all is
 * bounded by the run's concurrency, not its size). Their qid is the group's (training runs), else the middle of the
 * id `<run>/<qid>/<sample>` (plain runs), so a qid holding `/` (`algebra/3`) is listed and filtered as itself.
 */
export async function listRunning(pool: pg.Pool, filter: TrajectoryFilter, limit = 100): Promise<{ entries: TrajectoryListEntry[]; count: number }> {
  if (filter.status === 'completed' || filter.status === 'failed' || filter.failureType || filter.stale) return { entries: [], count: 0 };
  const { rows } = await pool.query(
    `WITH running AS (
       SELECT p.trajectory_id, p.created_at, coalesce(g.qid, substring(p.trajectory_id FROM '^[^/]*/(.*)/[^/]*$'), '') AS qid,
              (SELECT array_agg(coalesce(o.verdict, '') ORDER BY o.turn) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id) AS verdicts,
              (SELECT array_agg(o.finish_reason <> 'stop' ORDER BY o.turn) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id) AS truncated,
              (SELECT coalesce(sum(octet_length(o.output_ids) / 4), 0) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id)::int AS output_tokens,
              (SELECT array_agg(o.version_end) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id) AS versions,
              -- The environment's own success (release 6 keeps it with the step); a step kept before, by its verdict.
              (SELECT count(*) FROM turn_outputs o WHERE o.trajectory_id = p.trajectory_id
                 AND coalesce((o.environment_step->>'success')::boolean, o.verdict = 'correct'))::int AS successes
       FROM trajectory_prompts p LEFT JOIN rollout_members m ON m.trajectory_id = p.trajectory_id LEFT JOIN rollout_groups g ON g.group_id = m.group_id
       WHERE p.run_id = $1 AND NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.trajectory_id = p.trajectory_id)
     ), matching AS (
       SELECT * FROM running
       WHERE ($2::text IS NULL OR qid = $2) AND ($3::text IS NULL OR strpos(lower(qid), lower($3)) > 0) AND ($4::text IS NULL OR $4 = ANY(verdicts))
         AND ($5::int IS NULL OR $5 = ANY(versions)) AND (NOT $6 OR true = ANY(truncated))
         AND (NOT $8 OR coalesce(array_position(verdicts, 'correct') < (SELECT max(i) FROM generate_subscripts(verdicts, 1) i WHERE verdicts[i] NOT IN ('correct', '')), false))
     )
     SELECT *, count(*) OVER () AS total FROM matching ORDER BY created_at DESC, trajectory_id LIMIT $7`,
    [
      filter.runId,
      filter.qid ?? null,
      filter.qidContains ?? null,
      filter.verdict ?? null,
      filter.policyVersion ?? null,
      filter.truncated ?? false,
      limit,
      filter.correctThenWrong ?? false,
    ],
  );
  return {
    count: rows.length === 0 ? 0 : Number(rows[0].total),
    entries: rows.map((row): TrajectoryListEntry => {
      const verdicts: string[] = row.verdicts ?? [];
      return {
        trajectoryId: row.trajectory_id,
        qid: row.qid,
        status: 'running',
        turns: verdicts.length,
        successes: row.successes,
        reward: null,
        verdicts,
        truncated: row.truncated ?? [],
        staleness: null,
        failureType: null,
        outputTokens: row.output_tokens,
        finishedAt: null,
      };
    }),
  };
}

/** The stored rows' WHERE clause (over `trajectories t`) and its parameters. */
interface Conditions {
  sql: string;
  /**
   * `sql` less the run's own condition: where the rows come from run_stale_trajectories (one run's already), so a
   * trajectory is looked up by its primary key rather than by an index led by run_id (a skip scan per row).
   */
  beyondRun: string;
  params: unknown[];
  /** Only run and qid (and status) are constrained: the per-problem counts give the total exactly. */
  countable: boolean;
  /** The qids the list is limited to (exact or by substring), or null for every problem. */
  qids: string[] | null;
  /**
   * Filter first, then sort what matched (OFFSET 0 keeps the planner from walking the sort index instead): a policy
   * version's rows lie together deep in a newest-first scan, so the sort index would read most of the run to find them;
   * a failed trajectory's verdict is looked up in its own small table (migration 017), then sorted.
   */
  fenced: boolean;
  /** The bounded count walks the run newest first (a verdict: see countStored). */
  countNewestFirst: boolean;
  /** Only stale trajectories: `sql` leaves that condition out (withStale adds it), a walk of the stale table needs none. */
  stale: boolean;
}

/** The WHERE clause with the stale condition, where the filter asks for it: the trajectory is in the run's stale list. */
function withStale(where: Conditions): string {
  return where.stale ? `${where.sql} AND EXISTS (SELECT 1 FROM run_stale_trajectories s WHERE s.trajectory_id = t.trajectory_id)` : where.sql;
}

async function storedConditions(pool: pg.Pool, filter: TrajectoryFilter): Promise<Conditions> {
  const params: unknown[] = [filter.runId];
  const parts = ['t.run_id = $1'];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    parts.push(sql(`$${params.length}`));
  };
  let qids: string[] | null = null;
  if (filter.qid !== undefined) {
    qids = [filter.qid];
    add((n) => `t.qid = ${n}`, filter.qid);
  }
  if (filter.qidContains !== undefined) {
    // Substring: matched against the run's problems (one row each), then looked up by the (run, qid) index.
    const containing = await problemsContaining(pool, filter.runId, filter.qidContains);
    qids = qids ? qids.filter((qid) => containing.includes(qid)) : containing;
    add((n) => `t.qid = ANY(${n}::text[])`, containing);
  }
  if (filter.status) add((n) => `t.status = ${n}`, filter.status);
  const countable =
    !filter.failureType && !filter.verdict && filter.policyVersion === undefined && !filter.stale && !filter.truncated && !filter.correctThenWrong;
  if (filter.failureType) add((n) => `t.failure_type = ${n}`, filter.failureType);
  // Only a failed trajectory has a failure type: said, so the planner reads the failed rows' partial index rather than
  // the run's newest-first index with a heap fetch per row (the bounded count: ~0.8 s → 44 ms at a million).
  if (filter.failureType && !filter.status) parts.push(`t.status = 'failed'`);
  // A failed trajectory's judged turns are in turn_texts only, and migration 017 keeps their verdicts by run: the
  // failed rows with this verdict are found there directly, not by probing every failed row of the run.
  const failedVerdict = filter.verdict !== undefined && filter.status === 'failed';
  if (failedVerdict) {
    add((n) => `t.trajectory_id IN (SELECT f.trajectory_id FROM failed_turn_verdicts f WHERE f.run_id = $1 AND f.verdict = ${n})`, filter.verdict);
  } else if (filter.verdict) {
    // A completed trajectory's verdicts are in its monitor records (narrow rows), a failed one's in migration 017's
    // failed_turn_verdicts (a primary-key probe that reads no heap): never the wide turn_texts rows, which a
    // completed trajectory that does not match used to be probed in too.
    add(
      (n) => `(EXISTS (SELECT 1 FROM monitor_records r WHERE r.trajectory_id = t.trajectory_id AND r.verdict = ${n})
      OR EXISTS (SELECT 1 FROM failed_turn_verdicts f WHERE f.trajectory_id = t.trajectory_id AND f.verdict = ${n}))`,
      filter.verdict,
    );
  }
  if (filter.policyVersion !== undefined) add((n) => `t.version_end @> ARRAY[${n}::int]`, filter.policyVersion);
  if (filter.truncated) parts.push('true = ANY(t.seq_no_eos_mask)');
  // The very expression of migration 017's partial index, so the planner reads that index.
  if (filter.correctThenWrong) parts.push('ratchet_correct_then_wrong(t.successes)');
  return {
    sql: parts.join(' AND '),
    beyondRun: parts.slice(1).join(' AND ') || 'true',
    params,
    countable,
    qids,
    fenced: filter.policyVersion !== undefined || failedVerdict,
    countNewestFirst: filter.verdict !== undefined && !failedVerdict,
    stale: filter.stale === true,
  };
}

async function countStored(pool: pg.Pool, filter: TrajectoryFilter, where: Conditions): Promise<ListTotal> {
  if (onlyStale(filter)) {
    // Every handed-out member is stored (groups are handed out once finished): the stale ones are the run's members
    // over η at their latest hand-out, which migration 012's staleness counts give exactly (the run page's counter).
    const {
      rows: [row],
    } = await pool.query<{ n: string }>(
      `SELECT coalesce(sum(s.members), 0) AS n FROM run_staleness s JOIN rollout_runs r ON r.run_id = s.run_id
       WHERE s.run_id = $1 AND s.staleness > r.max_head_offpolicyness`,
      [filter.runId],
    );
    return { count: Number(row!.n), exact: true };
  }
  if (where.countable) {
    const column = filter.status === 'failed' ? 'failed' : filter.status === 'completed' ? 'samples - failed' : 'samples';
    const {
      rows: [row],
    } = await pool.query<{ n: string }>(
      `SELECT coalesce(sum(${column}), 0) AS n FROM run_problems WHERE run_id = $1 AND ($2::text[] IS NULL OR qid = ANY($2))`,
      [filter.runId, where.qids],
    );
    return { count: Number(row!.n), exact: true };
  }
  // A verdict is counted in the list's own order (newest first): an index chosen for run_id alone may walk the run by
  // turns or tokens, where a verdict's matches lie thin (1-turn trajectories are rarely wrong), and the bounded count
  // read 10,292 rows at a million to find 1,001 (4,416 newest first). The LIMIT keeps every plan a bounded index walk.
  const sql = where.stale
    ? `SELECT 1 FROM run_stale_trajectories s JOIN trajectories t ON t.trajectory_id = s.trajectory_id WHERE s.run_id = $1 AND ${where.beyondRun}`
    : `SELECT 1 FROM trajectories t WHERE ${where.sql}${where.countNewestFirst ? ' ORDER BY t.finished_at DESC' : ''}`;
  try {
    // Bounded twice: at COUNT_LIMIT matches, and in time (a rare filter over a million rows finds few matches
    // in many rows); past the time the planner's estimate stands in, and says it is one.
    const n = await inTransaction(pool, async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${COUNT_TIMEOUT_MS}`);
      const {
        rows: [row],
      } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql} LIMIT ${COUNT_LIMIT + 1}) matching`, where.params);
      return row!.n;
    });
    return n > COUNT_LIMIT ? { count: COUNT_LIMIT, exact: false } : { count: n, exact: true };
  } catch (error) {
    if ((error as { code?: string }).code !== '57014') throw error;
    const {
      rows: [plan],
    } = await pool.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, where.params);
    return { count: Math.round(plan!['QUERY PLAN'][0].Plan['Plan Rows']), exact: false, estimated: true };
  }
}

/** The list filtered by stale alone (with any order): its total is a count kept per run. */
function onlyStale(filter: TrajectoryFilter): boolean {
  return (
    filter.stale === true &&
    filter.qid === undefined &&
    filter.qidContains === undefined &&
    filter.status === undefined &&
    filter.failureType === undefined &&
    filter.verdict === undefined &&
    filter.policyVersion === undefined &&
    !filter.truncated &&
    !filter.correctThenWrong
  );
}

/** How long the bounded count may take before the planner's estimate replaces it. */
const COUNT_TIMEOUT_MS = 300;

async function problemsContaining(pool: pg.Pool, runId: string, part: string): Promise<string[]> {
  const { rows } = await pool.query<{ qid: string }>('SELECT qid FROM run_problems WHERE run_id = $1 AND strpos(lower(qid), lower($2)) > 0', [
    runId,
    part,
  ]);
  return rows.map((row) => row.qid);
}

/** A keyset cursor: the sort it belongs to, the last row's sort value and id. Opaque to the page, URL-safe. */
function encodeCursor(sort: SortKey, value: string, trajectoryId: string): string {
  return Buffer.from(JSON.stringify([sort, value, trajectoryId])).toString('base64url');
}

function decodeCursor(cursor: string | undefined, sort: SortKey): { value: string; trajectoryId: string } | null {
  if (!cursor) return null;
  try {
    const [owner, value, trajectoryId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    // A cursor of another sort (a link kept across a sort change) starts from the top rather than skip rows.
    return owner === sort && typeof value === 'string' && typeof trajectoryId === 'string' ? { value, trajectoryId } : null;
  } catch {
    return null;
  }
}

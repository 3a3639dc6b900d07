// Synthetic rows for the dashboard benchmark, written by set-based INSERT ... SELECT FROM generate_series in
// Postgres itself (a million trajectories take minutes, not the hours a million persist transactions would).
// The rows have the shape the workers write: 1-3 turns each, per-turn verdicts (correct, wrong, no_answer,
// timeout, runtime_error), success rising with the policy version, ~2% failed trajectories with failure types,
// groups of 8 samples (admitted, finished, 90% consumed through acknowledged batches, some stale), running
// trajectories with working rows, queued groups, training steps. The packed token columns are 256-byte stand-ins:
// real ones are larger and TOASTed out of the heap, which the dashboard's queries never read.
import type pg from 'pg';
import { ensureRun } from '../../src/store/write/rollout-groups.js';

export const GROUP_SIZE = 8;
/** Groups of a synthetic training run that are still generating (their members have working rows), and queued. */
const RUNNING_GROUPS = 25;
const QUEUED_GROUPS = 50;
const QIDS = 5000;

export interface SyntheticRun {
  runId: string;
  /** Stored trajectories (rounded up to whole groups for a training run). */
  trajectories: number;
  /** A training run (groups, admission, batches) or a plain `ratchet run` (ids run/qid/sample). */
  kind: 'training' | 'plain';
  /** Minutes over which the stored trajectories finished, ending now. */
  spanMinutes: number;
  /** Policy versions the run goes through (default: one per 20,000 trajectories, at least 5). */
  versions?: number;
}

/** The policy versions a synthetic run goes through. */
export function syntheticVersions(run: SyntheticRun): number {
  return run.versions ?? Math.max(5, Math.round(run.trajectories / 20_000));
}

/** A group id of a synthetic training run: `run/q<k>@e<epoch>`, as `ratchet submit --tag` makes them. */
export function syntheticGroupId(runId: string, group: number): string {
  return `${runId}/q${group % QIDS}@e${Math.floor(group / QIDS)}`;
}

/** Writes one run's rows, logging the seconds each table took. */
export async function seedSyntheticRun(pool: pg.Pool, run: SyntheticRun, log: (line: string) => void): Promise<void> {
  const stored = run.kind === 'training' ? Math.ceil(run.trajectories / GROUP_SIZE) * GROUP_SIZE : run.trajectories;
  const versions = syntheticVersions(run);
  const storedGroups = stored / GROUP_SIZE;
  const step = async (what: string, sql: string, params: unknown[]) => {
    const started = performance.now();
    const result = await pool.query(sql, params);
    log(`  ${run.runId}: ${what} ${result.rowCount ?? 0} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };
  await pool.query('INSERT INTO policy_versions (version) SELECT v FROM generate_series(0, $1::int) v ON CONFLICT DO NOTHING', [versions]);
  // Trajectory i is sample i % 8 of group i / 8; its policy version grows with its group, so the run "learns".
  const idSql =
    run.kind === 'training'
      ? `format('%s/q%s@e%s/%s', $1::text, (i / ${GROUP_SIZE}) % ${QIDS}, (i / ${GROUP_SIZE}) / ${QIDS}, i % ${GROUP_SIZE})`
      : `format('%s/p%s/%s', $1::text, i / ${GROUP_SIZE}, i % ${GROUP_SIZE})`;
  const qidSql = run.kind === 'training' ? `format('q%s', (i / ${GROUP_SIZE}) % ${QIDS})` : `format('p%s', i / ${GROUP_SIZE})`;
  await step(
    'trajectories',
    `
    INSERT INTO trajectories (trajectory_id, qid, status, error, failure_type, failure_class, layout, num_turns, birth_time,
      packed_input_ids, packed_logprobs, prompt_mask, seqlens, prompt_lens, version_start, version_end, rewards, raw_rewards, successes,
      output_tokens, end_reason, finished_at, temperature, top_p, top_k, min_p, repetition_penalty)
    SELECT ${idSql}, ${qidSql},
      CASE WHEN a.failed THEN 'failed' ELSE 'completed' END,
      CASE WHEN a.failed THEN 'synthetic failure' END,
      CASE WHEN a.failed THEN (ARRAY['InferenceUnavailable', 'VerifierTimeout', 'ContextOverflow'])[1 + i % 3] END,
      CASE WHEN a.failed THEN (ARRAY['infrastructure', 'infrastructure', 'data'])[1 + i % 3] END,
      'seed', CASE WHEN a.failed THEN a.turns - 1 ELSE a.turns END, (extract(epoch FROM a.finished) * 1000)::bigint - 30000,
      CASE WHEN NOT a.failed THEN decode(repeat('00', 256), 'hex') END, CASE WHEN NOT a.failed THEN decode(repeat('00', 256), 'hex') END,
      CASE WHEN NOT a.failed THEN decode(repeat('01', 64), 'hex') END,
      CASE WHEN NOT a.failed THEN array_fill(300, ARRAY[a.turns]) END, CASE WHEN NOT a.failed THEN array_fill(200, ARRAY[a.turns]) END,
      CASE WHEN NOT a.failed THEN array_fill(a.version, ARRAY[a.turns]) END, CASE WHEN NOT a.failed THEN array_fill(a.version, ARRAY[a.turns]) END,
      CASE WHEN NOT a.failed THEN s.returns END, CASE WHEN NOT a.failed THEN s.raw END, CASE WHEN NOT a.failed THEN s.successes END,
      CASE WHEN a.failed THEN 0 ELSE a.turns * (100 + abs(hashint4(i)) % 400) END, CASE WHEN NOT a.failed THEN 'turns' END, a.finished,
      1.0, 1.0, -1, 0.0, 1.0
    FROM generate_series(0, $2::int - 1) i
    CROSS JOIN LATERAL (SELECT 1 + abs(hashint4(i * 7)) % 3 AS turns, i % 53 = 11 AS failed,
                               (((i / ${GROUP_SIZE})::bigint * $3::int) / greatest($4::int, 1))::int AS version,
                               now() - make_interval(secs => $5::float8 * 60 * ($2::int - 1 - i) / greatest($2::int, 1)) AS finished) a
    CROSS JOIN LATERAL (
      SELECT array_agg(ok ORDER BY t) AS successes, array_agg(CASE WHEN ok THEN 1.0 ELSE -1.0 END ORDER BY t) AS raw,
             array_agg(CASE WHEN ok THEN 1.0 ELSE -1.0 END ORDER BY t) AS returns
      FROM (SELECT t, abs(hashint4(i * 4 + t)) % 100 < 25 + (50 * a.version) / greatest($3::int, 1) AS ok FROM generate_series(1, a.turns) t) x) s`,
    [run.runId, stored, versions, storedGroups, run.spanMinutes],
  );
  const verdict = `CASE WHEN t.successes[k] THEN 'correct' ELSE (ARRAY['wrong', 'wrong', 'wrong', 'no_answer', 'timeout', 'runtime_error'])[1 + abs(hashtext(t.trajectory_id) + k) % 6] END`;
  await step(
    'monitor_records',
    `
    INSERT INTO monitor_records (trajectory_id, turn, qid, version_start, version_end, success, verdict, prompt_len, answer_len)
    SELECT t.trajectory_id, k - 1, t.qid, t.version_start[k], t.version_end[k], t.successes[k], ${verdict}, 200 + 350 * (k - 1), 50 + abs(hashtext(t.trajectory_id) + k) % 900
    FROM trajectories t, generate_subscripts(t.successes, 1) k WHERE t.run_id = $1 AND t.status = 'completed'`,
    [run.runId],
  );
  await step(
    'turn_texts',
    `
    INSERT INTO turn_texts (trajectory_id, turn, answer_text, extracted_answer, verdict, feedback_text)
    SELECT t.trajectory_id, k - 1, format('Let me work through it step by step. ... The answer is \\boxed{%s}.', k * 7), (k * 7)::text, ${verdict},
           CASE WHEN NOT t.successes[k] THEN 'Your answer is incorrect. Please try again.' END
    FROM trajectories t, generate_subscripts(t.successes, 1) k WHERE t.run_id = $1 AND t.status = 'completed'`,
    [run.runId],
  );
  if (run.kind === 'plain') return;
  await ensureRun(pool, { runId: run.runId, maxHeadOffpolicyness: 2, batchSize: 32, maxConcurrent: RUNNING_GROUPS + 10 });
  const totalGroups = storedGroups + RUNNING_GROUPS + QUEUED_GROUPS;
  const consumedGroups = Math.floor((storedGroups * 0.9) / 32) * 32;
  // Groups finish with their last member; 90% (whole batches of 32) are consumed, the running and queued ones follow.
  await step(
    'rollout_groups',
    `
    INSERT INTO rollout_groups (group_id, run_id, qid, size, joined, status, admitted_at, admitted_version, admitted_accepted, admitted_running,
      finished, completed, birth_time, finished_at, batch_id, lease_expires_at, consumed_at)
    SELECT format('%s/q%s@e%s', $1::text, g % ${QIDS}, g / ${QIDS}), $1, format('q%s', g % ${QIDS}), ${GROUP_SIZE}, ${GROUP_SIZE},
      CASE WHEN g < $2::int + ${RUNNING_GROUPS} THEN 'admitted' ELSE 'pending' END,
      CASE WHEN g < $2::int + ${RUNNING_GROUPS} THEN now() END, CASE WHEN g < $2::int + ${RUNNING_GROUPS} THEN 0 END, 0, 0,
      CASE WHEN g < $2::int THEN f.n ELSE 0 END, CASE WHEN g < $2::int THEN f.completed ELSE 0 END,
      f.birth, f.finished, CASE WHEN g < $3::int THEN md5($1::text || (g / 32))::uuid END,
      CASE WHEN g < $3::int THEN f.finished + interval '10 minutes' END, CASE WHEN g < $3::int THEN f.finished + interval '1 minute' END
    FROM generate_series(0, $4::int - 1) g
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS n, count(*) FILTER (WHERE t.status = 'completed')::int AS completed, min(t.birth_time) AS birth, max(t.finished_at) AS finished
      FROM trajectories t WHERE g < $2::int AND t.trajectory_id IN (SELECT format('%s/q%s@e%s/%s', $1::text, g % ${QIDS}, g / ${QIDS}, s) FROM generate_series(0, ${GROUP_SIZE} - 1) s)
    ) f ON true`,
    [run.runId, storedGroups, consumedGroups, totalGroups],
  );
  await step(
    'rollout_members',
    `
    INSERT INTO rollout_members (trajectory_id, group_id, sample, finished, staleness, stale)
    SELECT format('%s/q%s@e%s/%s', $1::text, (i / ${GROUP_SIZE}) % ${QIDS}, (i / ${GROUP_SIZE}) / ${QIDS}, i % ${GROUP_SIZE}),
           format('%s/q%s@e%s', $1::text, (i / ${GROUP_SIZE}) % ${QIDS}, (i / ${GROUP_SIZE}) / ${QIDS}), i % ${GROUP_SIZE}, i < $2::int,
           CASE WHEN i < $3::int * ${GROUP_SIZE} THEN abs(hashint4(i)) % 4 END, CASE WHEN i < $3::int * ${GROUP_SIZE} THEN abs(hashint4(i)) % 4 > 2 END
    FROM generate_series(0, $4::int * ${GROUP_SIZE} - 1) i`,
    [run.runId, stored, consumedGroups, totalGroups],
  );
  await step(
    'rollout_batches',
    `
    INSERT INTO rollout_batches (batch_id, run_id, consumer, policy_version, groups, trajectories, stale_trajectories, claimed_at, lease_expires_at, acked_at)
    SELECT g.batch_id, $1, 'bench-trainer', max(g.admitted_version), count(DISTINCT g.group_id), count(*) FILTER (WHERE t.status = 'completed'),
           count(*) FILTER (WHERE t.status = 'completed' AND m.stale), max(g.finished_at), max(g.lease_expires_at), max(g.consumed_at)
    FROM rollout_groups g JOIN rollout_members m USING (group_id) JOIN trajectories t USING (trajectory_id)
    WHERE g.run_id = $1 AND g.batch_id IS NOT NULL GROUP BY g.batch_id`,
    [run.runId],
  );
  await step(
    'trajectory_prompts (running)',
    `
    INSERT INTO trajectory_prompts (trajectory_id, prompt_ids, prompt_text)
    SELECT m.trajectory_id, decode(repeat('00', 800), 'hex'), 'What is 6 times 7?'
    FROM rollout_members m JOIN rollout_groups g USING (group_id) WHERE g.run_id = $1 AND g.status = 'admitted' AND g.finished_at IS NULL`,
    [run.runId],
  );
  await step(
    'training_steps',
    `
    INSERT INTO training_steps (run_id, step, policy_version, metrics)
    SELECT $1, v, v + 1, jsonb_build_object('loss', 1.0 / (v + 1), 'mean_reward', -0.5 + v::float8 / $2::int) FROM generate_series(0, $2::int - 1) v
    ON CONFLICT DO NOTHING`,
    [run.runId, versions],
  );
}

/** Submissions the client would have recorded, where this schema has them (migration 013): stored, running and a backlog. */
export async function seedSubmissions(pool: pg.Pool, runId: string, backlog: number, log: (line: string) => void): Promise<void> {
  if (!(await pool.query(`SELECT to_regclass('run_submissions') IS NOT NULL AS present`)).rows[0].present) return;
  const started = performance.now();
  const known = await pool.query(
    `INSERT INTO run_submissions (trajectory_id) SELECT trajectory_id FROM trajectories WHERE run_id = $1
     UNION ALL SELECT trajectory_id FROM trajectory_prompts WHERE run_id = $1
     UNION ALL SELECT m.trajectory_id FROM rollout_members m JOIN rollout_groups g USING (group_id) WHERE g.run_id = $1 AND g.status = 'pending'
     ON CONFLICT DO NOTHING`,
    [runId],
  );
  const queued = await pool.query(
    `INSERT INTO run_submissions (trajectory_id) SELECT format('%s/backlog%s/0', $1::text, i) FROM generate_series(1, $2::int) i ON CONFLICT DO NOTHING`,
    [runId, backlog],
  );
  log(`  ${runId}: run_submissions ${(known.rowCount ?? 0) + (queued.rowCount ?? 0)} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

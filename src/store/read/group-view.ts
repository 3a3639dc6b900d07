import type pg from 'pg';

/** One sample of a group as the group page lines them up. */
export interface GroupMember {
  trajectoryId: string;
  sample: number;
  status: 'completed' | 'failed' | 'running' | 'queued';
  failureType: string | null;
  verdicts: string[];
  successes: boolean[];
  rawRewards: number[];
  /** Returns-to-go R_t per turn. */
  rewards: number[];
  outputLens: number[];
  staleness: number | null;
}

export interface GroupView {
  groupId: string;
  qid: string | null;
  runId: string;
  /** The group's declared size (training runs), or the samples found (plain runs). */
  size: number;
  admission: { status: string; admittedVersion: number | null; consumedAt: Date | null } | null;
  members: GroupMember[];
}

/**
 * The n samples of one prompt. A training run's group is in rollout_groups; a plain run's group is every
 * trajectory `<groupId>/<sample>`, the ids `ratchet run` gives the samples of one problem.
 */
export async function loadGroupView(pool: pg.Pool, groupId: string): Promise<GroupView | undefined> {
  const group = (
    await pool.query('SELECT run_id, qid, size, status, admitted_version, consumed_at FROM rollout_groups WHERE group_id = $1', [groupId])
  ).rows[0];
  const prefix = `${groupId}/`;
  const slash = groupId.indexOf('/');
  // A training group's samples are its members, with the staleness set at hand-out. A plain run's group
  // `<run>/<qid>` is found by the (run, qid) index, and its running samples by their working rows; a sample that is
  // also a member is listed once, as the member (before, a UNION kept both rows and DISTINCT ON picked either,
  // so the staleness column showed 0 or – at random).
  const { rows } = await pool.query(
    `WITH plain AS (
       SELECT trajectory_id FROM trajectories WHERE run_id = $3 AND qid = $4 AND starts_with(trajectory_id, $2)
       UNION SELECT trajectory_id FROM trajectory_prompts WHERE run_id = $3 AND starts_with(trajectory_id, $2)
     ), ids AS (
       SELECT trajectory_id, sample, staleness FROM rollout_members WHERE group_id = $1
       UNION ALL
       SELECT trajectory_id, substr(trajectory_id, length($2) + 1)::int, NULL FROM plain
       WHERE substr(trajectory_id, length($2) + 1) ~ '^[0-9]{1,9}$'
         AND NOT EXISTS (SELECT 1 FROM rollout_members m WHERE m.trajectory_id = plain.trajectory_id)
     )
     SELECT DISTINCT ON (ids.sample) ids.trajectory_id, ids.sample, ids.staleness, t.status, t.failure_type, t.qid, t.successes, t.raw_rewards, t.rewards,
            (SELECT array_agg(verdict ORDER BY turn) FROM monitor_records r WHERE r.trajectory_id = ids.trajectory_id) AS verdicts,
            (SELECT array_agg(answer_len ORDER BY turn) FROM monitor_records r WHERE r.trajectory_id = ids.trajectory_id) AS output_lens,
            EXISTS (SELECT 1 FROM trajectory_prompts p WHERE p.trajectory_id = ids.trajectory_id) AS working
     FROM ids LEFT JOIN trajectories t USING (trajectory_id) ORDER BY ids.sample, t.status NULLS LAST, ids.trajectory_id`,
    [groupId, prefix, slash > 0 ? groupId.slice(0, slash) : groupId, slash > 0 ? groupId.slice(slash + 1) : ''],
  );
  if (!group && rows.length === 0) return undefined;
  const members = rows.map((row): GroupMember => ({
    trajectoryId: row.trajectory_id,
    sample: row.sample,
    status: row.status ?? (row.working ? 'running' : 'queued'),
    failureType: row.failure_type,
    verdicts: row.verdicts ?? [],
    successes: row.successes ?? [],
    rawRewards: row.raw_rewards ?? [],
    rewards: row.rewards ?? [],
    outputLens: row.output_lens ?? [],
    staleness: row.staleness,
  }));
  return {
    groupId,
    qid: group?.qid ?? rows.find((row) => row.qid)?.qid ?? null,
    runId: group?.run_id ?? groupId.split('/')[0]!,
    size: group?.size ?? members.length,
    admission: group ? { status: group.status, admittedVersion: group.admitted_version, consumedAt: group.consumed_at } : null,
    members,
  };
}

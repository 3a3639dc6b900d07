import type pg from 'pg';
import { listTrajectories, type TrajectoryListEntry } from '../store/read/trajectory-search.js';
import type { ListQuery } from './pages/trajectory-list.js';

/** The most rows a download holds: read as keyset pages of the list, so a download costs what paging through it costs. */
export const DOWNLOAD_ROWS = 10_000;
const DOWNLOAD_PAGE = 1_000;

const COLUMNS = [
  'trajectory_id',
  'qid',
  'status',
  'turns',
  'verdicts',
  'correct_turns',
  'return_r0',
  'output_tokens',
  'staleness',
  'failure_type',
  'finished_at',
];

/**
 * The run's stored trajectories as the list shows them (its filters and order), as CSV: one row per trajectory, the
 * turns' verdicts space-separated. At most DOWNLOAD_ROWS rows; `complete` says whether that was all of them.
 */
export async function trajectoryCsv(pool: pg.Pool, { filter, order }: ListQuery): Promise<{ csv: string; rows: number; complete: boolean }> {
  const lines = [COLUMNS.join(',')];
  let after: string | undefined;
  let rows = 0;
  do {
    const page = await listTrajectories(pool, filter, order, after, Math.min(DOWNLOAD_PAGE, DOWNLOAD_ROWS - rows));
    for (const entry of page.entries) lines.push(csvRow(entry));
    rows += page.entries.length;
    after = page.next ?? undefined;
  } while (after && rows < DOWNLOAD_ROWS);
  return { csv: `${lines.join('\n')}\n`, rows, complete: after === undefined };
}

function csvRow(t: TrajectoryListEntry): string {
  return [
    t.trajectoryId,
    t.qid,
    t.status,
    t.turns,
    t.verdicts.join(' '),
    t.successes,
    t.reward ?? '',
    t.outputTokens,
    t.staleness ?? '',
    t.failureType ?? '',
    t.finishedAt?.toISOString() ?? '',
  ]
    .map(csvField)
    .join(',');
}

/** RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled. */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

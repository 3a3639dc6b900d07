import type pg from 'pg';
import { trajectoryPages, type TrajectoryListEntry } from '../store/read/trajectory-search.js';
import type { ListQuery } from './pages/trajectory-list.js';

/** The most rows a download holds: read as keyset pages of the list, so a download costs what paging through it costs. */
export const DOWNLOAD_ROWS = 10_000;
/** The first page is small, so the first bytes leave at once; the rest in pages of DOWNLOAD_PAGE, each sent as it is read. */
const FIRST_PAGE = 100;
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

/** A download under way: its first page is read, the rest follows as `body` is read. */
export interface CsvDownload {
  /** Whether the download holds every matching row: known once the first page was the last, else 'unknown' (streamed). */
  complete: 'true' | 'unknown';
  /** Rows in the download, where known (the first page was the last). */
  rows: number | null;
  body: ReadableStream<Uint8Array>;
}

/**
 * The run's stored trajectories as the list shows them (its filters and order), as CSV: one row per trajectory, the
 * turns' verdicts space-separated, at most DOWNLOAD_ROWS rows. Streamed: the header and the first FIRST_PAGE rows are
 * read before the response starts (a query that fails fails the request), then one page of DOWNLOAD_PAGE at a time,
 * each written as it arrives and read only when the client has taken the one before (backpressure); no page asks for
 * the list's total (the bounded count the list shows), and a client that goes away stops the reads.
 */
export async function trajectoryCsvDownload(
  pool: pg.Pool,
  { filter, order }: ListQuery,
  limit = DOWNLOAD_ROWS,
  pageSizes: readonly number[] = [FIRST_PAGE, DOWNLOAD_PAGE],
): Promise<CsvDownload> {
  const pages = trajectoryPages(pool, filter, order, limit, pageSizes);
  const first = await pages.next();
  const firstRows = first.done ? [] : first.value.entries;
  const whole = first.done || first.value.next === null || firstRows.length >= limit;
  const encoder = new TextEncoder();
  const chunk = (entries: readonly TrajectoryListEntry[]) => encoder.encode(entries.map((entry) => `${csvRow(entry)}\n`).join(''));
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`${COLUMNS.join(',')}\n`));
        if (firstRows.length > 0) controller.enqueue(chunk(firstRows));
        if (whole) controller.close();
        return;
      }
      try {
        const page = await pages.next();
        if (page.done) controller.close();
        else if (page.value.entries.length > 0) controller.enqueue(chunk(page.value.entries));
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
  return { complete: whole && firstRows.length < limit ? 'true' : 'unknown', rows: whole ? firstRows.length : null, body };
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

import type pg from 'pg';
import type { RowStatus } from '../../trajectory/status-agreement.js';
import { storableText } from '../storable-text.js';

/** The stored status of each of these trajectories that has a row, in one query: ids without a row are absent. */
export async function storedStatuses(pool: pg.Pool, trajectoryIds: readonly string[]): Promise<Map<string, RowStatus>> {
  if (trajectoryIds.length === 0) return new Map();
  // Looked up as stored (an id Postgres cannot hold is stored made storable), answered as given.
  const { rows } = await pool.query<{ i: string; status: RowStatus }>(
    'SELECT u.i, t.status FROM unnest($1::text[]) WITH ORDINALITY AS u(id, i) JOIN trajectories t ON t.trajectory_id = u.id',
    [trajectoryIds.map(storableText)],
  );
  return new Map(rows.map((row) => [trajectoryIds[Number(row.i) - 1]!, row.status]));
}

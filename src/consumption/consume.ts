import type pg from 'pg';
import { ADMISSION_CHANNEL } from '../store/write/rollout-groups.js';
import { listen } from '../store/notifications.js';
import { readTrajectoriesById, type ExportedTrajectory } from '../store/read/trajectory-export.js';
import { claimBatch, UnknownRun, type ClaimedBatch, type ClaimRequest } from '../store/write/batches.js';

/** A claimed batch with its trajectories, each tagged with its group and staleness. */
export interface Batch extends ClaimedBatch {
  rows: ExportedTrajectory[];
}

export interface ConsumeRequest extends ClaimRequest {
  /** How long to wait for enough finished groups; 0 tries once. */
  waitMs: number;
}

/**
 * Claims a batch, waiting up to `waitMs` for enough finished groups. A finished group wakes the wait at once
 * (NOTIFY); a short poll covers lapsed leases. With `partial`, a timed-out wait hands out what is ready.
 */
export async function consumeBatch(pool: pg.Pool, databaseUrl: string, request: ConsumeRequest): Promise<Batch | undefined> {
  const deadline = Date.now() + request.waitMs;
  let wake: () => void = () => undefined;
  const listener = request.waitMs > 0 ? await listen(databaseUrl, [ADMISSION_CHANNEL], () => wake()) : undefined;
  try {
    for (;;) {
      const last = Date.now() >= deadline;
      // Members create their run when they first run, so a consumer that starts with its trainer may ask
      // before the run exists: that is "nothing ready yet" until the wait is over.
      const claimed = await claimBatch(pool, { ...request, partial: request.partial && last }).catch((error: unknown) => {
        if (error instanceof UnknownRun && !last) return undefined;
        throw error;
      });
      if (claimed) return { ...claimed, rows: await batchRows(pool, claimed) };
      if (last) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    await listener?.close();
  }
}

async function batchRows(pool: pg.Pool, batch: ClaimedBatch): Promise<ExportedTrajectory[]> {
  const rows = await readTrajectoriesById(
    pool,
    batch.trajectories.map((t) => t.trajectoryId),
  );
  const claims = new Map(batch.trajectories.map((t) => [t.trajectoryId, t]));
  return rows.map((row) => {
    const claim = claims.get(row.trajectory_id)!;
    return { ...row, group_id: claim.groupId, staleness: claim.staleness, stale: claim.stale };
  });
}

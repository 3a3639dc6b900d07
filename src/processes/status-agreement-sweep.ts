import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { log } from '../logging.js';
import { recordDisagreements } from '../store/write/status-disagreements.js';
import { CLOSED_WORKFLOW_STATUSES } from '../trajectory/status-agreement.js';
import { disagreeingWorkflows } from './row-comparison.js';
import { VISIBILITY_LAG_MS, workflowPages } from './workflow-pages.js';

/**
 * How far back a controller that just started compares. Shorter than the closed-trajectory sweep's week: this one
 * lists every closed trajectory, not only the few closed from outside. Older disagreements are still found live,
 * by `ratchet runs status` and the trajectory page.
 */
const FIRST_LOOKBACK_MS = 3_600_000;
const CLOSED = CLOSED_WORKFLOW_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * Compares each trajectory workflow that closed since the last pass with its row, and records every disagreement
 * (Temporal says Failed, the row says completed, say) in Postgres, where ratchet_status_disagreements_total and the
 * UI read it. Recording is idempotent per workflow run, so overlapping passes and several controllers count each once.
 */
export class StatusAgreementSweep {
  private since = new Date(Date.now() - FIRST_LOOKBACK_MS);

  constructor(
    private readonly pool: pg.Pool,
    private readonly temporal: Client,
  ) {}

  /** One pass; returns how many disagreements it found that no pass had recorded. */
  async sweep(): Promise<number> {
    const started = Date.now();
    const query = `WorkflowType = 'trajectory' AND ExecutionStatus IN (${CLOSED}) AND CloseTime > '${this.since.toISOString()}'`;
    let found = 0;
    for await (const page of workflowPages(this.temporal, query)) {
      const recorded = await recordDisagreements(this.pool, await disagreeingWorkflows(this.pool, page));
      for (const d of recorded) {
        log.warn(
          { trajectoryId: d.trajectoryId, temporalStatus: d.temporalStatus, rowStatus: d.rowStatus, kind: d.kind },
          'Temporal and Postgres disagree on how a trajectory ended',
        );
      }
      found += recorded.length;
    }
    this.since = new Date(started - VISIBILITY_LAG_MS);
    return found;
  }
}

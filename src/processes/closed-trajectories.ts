import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type pg from 'pg';
import { log } from '../logging.js';
import { storeFailedTrajectory, trajectoriesWithoutRow } from '../store/write/trajectory-store.js';
import { loadStoredTurns } from '../store/write/turn-store.js';
import { FailureType, failureClassOf } from '../trajectory/failure.js';
import { QID } from '../temporal/search-attributes.js';
import { VISIBILITY_LAG_MS, workflowPages } from './workflow-pages.js';

/**
 * How each closing reads in the failure message. A workflow cancelled before its first step finished (the request
 * check, before its failure path is armed) closes Canceled with no row: recorded here like a terminated one.
 */
const CLOSED_HOW: Record<string, string> = { TERMINATED: 'terminated', TIMED_OUT: 'timed out', CANCELLED: 'cancelled before it could record itself' };

/** How far back a controller that just started looks for trajectories closed while none was running. */
const FIRST_LOOKBACK_MS = 7 * 24 * 3_600_000;

/**
 * Records trajectories whose workflows were closed from outside their own code as failures: terminated by an
 * operator (`temporal workflow terminate`), or past a run timeout. Their failure path never ran, so without this
 * their rows would be missing, and a group waiting for them would hold its run's admission capacity for good.
 * Storing is idempotent (a trajectory with a row is left alone), so any number of controllers may sweep.
 */
export class ClosedTrajectorySweep {
  private since = new Date(Date.now() - FIRST_LOOKBACK_MS);

  constructor(
    private readonly pool: pg.Pool,
    private readonly temporal: Client,
  ) {}

  /** One pass over the trajectories closed since the last; returns how many it recorded. */
  async sweep(): Promise<number> {
    const started = Date.now();
    const query = `WorkflowType = 'trajectory' AND ExecutionStatus IN ('Terminated', 'TimedOut', 'Canceled') AND CloseTime > '${this.since.toISOString()}'`;
    let recorded = 0;
    for await (const page of workflowPages(this.temporal, query)) recorded += await this.recordMissing(page);
    this.since = new Date(started - VISIBILITY_LAG_MS);
    return recorded;
  }

  /** One query finds which of a page's trajectories have no row: a sweep touches only those. */
  private async recordMissing(executions: WorkflowExecutionInfo[]): Promise<number> {
    const missing = new Set(
      await trajectoriesWithoutRow(
        this.pool,
        executions.map((execution) => execution.workflowId),
      ),
    );
    let recorded = 0;
    for (const execution of executions) {
      if (missing.has(execution.workflowId) && (await this.record(execution))) recorded += 1;
    }
    return recorded;
  }

  private async record(execution: WorkflowExecutionInfo): Promise<boolean> {
    const trajectoryId = execution.workflowId;
    const how = CLOSED_HOW[execution.status.name] ?? execution.status.name.toLowerCase();
    const { turns } = await loadStoredTurns(this.pool, trajectoryId);
    const stored = await storeFailedTrajectory(
      this.pool,
      {
        trajectoryId,
        qid: execution.typedSearchAttributes.get(QID) ?? '',
        birthTime: execution.startTime.getTime(),
        layout: 'seed',
      },
      {
        turnsDone: turns.filter((turn) => turn.verdict !== null).length,
        message: `the trajectory's workflow was ${how} from outside Ratchet (run ${execution.runId}, closed ${execution.closeTime?.toISOString() ?? 'at an unknown time'})`,
        failureType: FailureType.WorkflowClosed,
        failureClass: failureClassOf(FailureType.WorkflowClosed),
      },
      turns,
    );
    if (stored) log.warn({ trajectoryId, status: execution.status.name }, 'recorded a trajectory closed from outside as failed');
    return stored;
  }
}

import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type pg from 'pg';
import { log } from '../logging.js';
import { ClosedTrajectorySweep } from './closed-trajectories.js';
import { StatusAgreementSweep } from './status-agreement-sweep.js';
import { listen } from '../store/notifications.js';
import { POLICY_VERSION_CHANNEL } from '../store/write/policy-versions.js';
import { admittedSignal } from '../workflows/admission-gate.js';
import { ADMISSION_CHANNEL, admitGroups, runsWithWaitingGroups, unstartedAdmittedMembers } from '../store/write/rollout-groups.js';

export interface AdmissionControllerOptions {
  pool: pg.Pool;
  temporal: Client;
  databaseUrl: string;
  /** Fallback poll; NOTIFY on joins, finished groups and new policy versions wakes it sooner. */
  pollMs?: number;
  /** How often trajectories closed from outside (terminated, timed out) are looked for and recorded as failed, and
   * closed trajectories are compared with their rows. */
  sweepMs?: number;
}

/**
 * Starts waiting groups as their runs' staleness bounds allow. It holds no state of its own: every decision
 * is one Postgres transaction over the run's rows, so it can be killed and restarted at any point, and
 * several can run at once.
 */
export class AdmissionController {
  private listener: { close(): Promise<void> } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** The sweep in flight, if any: a slow sweep is skipped, not queued behind itself. */
  private sweeping: Promise<void> | undefined;
  private readonly closed: ClosedTrajectorySweep;
  private readonly agreement: StatusAgreementSweep;
  private passes: Promise<void> = Promise.resolve();
  private stopped = false;
  private passQueued = false;
  private admittedGroups = 0;

  constructor(private readonly options: AdmissionControllerOptions) {
    this.closed = new ClosedTrajectorySweep(options.pool, options.temporal);
    this.agreement = new StatusAgreementSweep(options.pool, options.temporal);
  }

  async start(): Promise<void> {
    // Members of groups admitted just before a crash may never have been told.
    await this.tell(await unstartedAdmittedMembers(this.options.pool));
    this.listener = await listen(this.options.databaseUrl, [ADMISSION_CHANNEL, POLICY_VERSION_CHANNEL], () => void this.admit());
    this.timer = setInterval(() => void this.admit(), this.options.pollMs ?? 1_000);
    await this.admit();
    this.sweep();
    this.sweepTimer = setInterval(() => this.sweep(), this.options.sweepMs ?? 30_000);
  }

  /** Records trajectories closed from outside (a member recorded so may finish its group, which wakes admission),
   * then compares closed trajectories with their rows: a row the first records is then compared too. */
  private sweep(): void {
    if (this.sweeping || this.stopped) return;
    this.sweeping = this.closed
      .sweep()
      .then(
        () => undefined,
        (error: Error) => {
          log.warn({ err: error.message }, 'sweep for trajectories closed from outside failed; retrying at the next one');
        },
      )
      .then(() => this.agreement.sweep())
      .then(
        () => undefined,
        (error: Error) => {
          log.warn({ err: error.message }, 'comparing closed trajectories with their rows failed; retrying at the next sweep');
        },
      )
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  /** Groups this controller admitted since it started. */
  get admitted(): number {
    return this.admittedGroups;
  }

  /** One admission pass over every run with complete groups waiting; passes never overlap, and a burst of
   * notifications while one runs queues a single pass after it. */
  admit(): Promise<void> {
    if (this.passQueued) return this.passes;
    this.passQueued = true;
    this.passes = this.passes
      .then(async () => {
        this.passQueued = false;
        if (this.stopped) return;
        for (const runId of await runsWithWaitingGroups(this.options.pool)) {
          const groups = await admitGroups(this.options.pool, runId);
          this.admittedGroups += groups.length;
          if (groups.length > 0) log.debug({ runId, groups: groups.length }, 'admitted groups');
          await this.tell(groups.flatMap((group) => group.trajectoryIds));
        }
      })
      .catch((error: Error) => log.warn({ err: error.message }, 'admission pass failed; retrying at the next poll'));
    return this.passes;
  }

  private async tell(trajectoryIds: readonly string[]): Promise<void> {
    // A few dozen signals in flight at a time: a large admission should not open thousands of calls at once.
    for (let start = 0; start < trajectoryIds.length; start += 64) await this.signal(trajectoryIds.slice(start, start + 64));
  }

  private async signal(trajectoryIds: readonly string[]): Promise<void> {
    await Promise.all(
      trajectoryIds.map(async (id) => {
        try {
          await this.options.temporal.workflow.getHandle(id).signal(admittedSignal);
        } catch (error) {
          // A finished or cancelled member has nothing to be told; any other member re-checks on its own timer.
          if (!(error instanceof WorkflowNotFoundError))
            log.warn({ trajectoryId: id, err: (error as Error).message }, 'could not signal an admitted trajectory');
        }
      }),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.sweepTimer);
    await this.listener?.close();
    await this.passes;
    await this.sweeping;
  }
}

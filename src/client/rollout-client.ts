import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type pg from 'pg';
import { cancelGroups, ensureRun } from '../store/write/rollout-groups.js';
import { groupId as groupIdOf, runConfigSchema, type RunConfig } from '../admission/group-membership.js';
import { runStatus, type RunStatus } from '../store/read/run-status.js';
import { loadConfig } from '../config.js';
import { acknowledgeBatch, extendLease } from '../store/write/batches.js';
import { consumeBatch, type Batch } from '../consumption/consume.js';
import type { Problem } from '../datasets/index.js';
import { failedResult } from './run-rollouts.js';
import { submitTrajectory, trajectoryRequest } from './submit.js';
import { openDatabase } from '../store/database.js';
import { finishedGroupsAfter } from '../store/read/group-counts.js';
import { recordSubmissions } from '../store/read/run-aggregates.js';
import { recordTrainingStep, trainingSteps } from '../store/write/training-steps.js';
import type { TrainingStep } from '../training/training-step.js';
import type { RolloutOptions } from '../trajectory/options.js';
import { connectClient, ensureSearchAttributes } from '../temporal/connection.js';
import type { TrajectoryRequest, TrajectoryResult } from '../workflows/trajectory-state.js';

export interface SubmitOptions {
  /** n: samples per prompt, the group size. */
  samples: number;
  rollout?: Partial<RolloutOptions>;
  /** Tells apart a prompt submitted again in the same run (another epoch, say): the group id gets `@tag`. */
  tag?: string;
  timeouts?: TrajectoryRequest['timeouts'];
}

export interface SubmittedGroup {
  groupId: string;
  qid: string;
  trajectoryIds: string[];
  /** Every member already existed: a resubmission, which starts nothing new. */
  duplicate: boolean;
}

export interface FinishedGroup {
  groupId: string;
  qid: string;
  completed: number;
  failed: number;
  finishedAt: Date;
}

export interface ConsumeOptions {
  consumer?: string;
  /** How long the batch is this consumer's before its groups are handed out again. Default 10 minutes. */
  leaseMs?: number;
  /** How long to wait for enough finished groups. Default 10 minutes. */
  waitMs?: number;
  /** On timeout, hand out fewer groups (at least one) instead of nothing. */
  partial?: boolean;
}

/**
 * What a trainer uses: submit prompts as groups under a run's staleness bound, follow them, and consume
 * finished groups in batches that are acknowledged once trained on. Every piece of state it touches lives in
 * Temporal or Postgres, so any number of clients, in any number of processes, can come and go.
 */
export class RolloutClient {
  private constructor(
    readonly temporal: Client,
    readonly pool: pg.Pool,
    private readonly databaseUrl: string,
    private readonly owned: { close(): Promise<void> },
  ) {}

  /** Connects with the given settings, falling back to the environment (TEMPORAL_ADDRESS, DATABASE_URL...). */
  static async connect(options: { temporalAddress?: string; namespace?: string; databaseUrl?: string } = {}): Promise<RolloutClient> {
    const config = loadConfig();
    const address = options.temporalAddress ?? config.temporal.address;
    const databaseUrl = options.databaseUrl ?? config.databaseUrl;
    if (!address || !databaseUrl)
      throw new Error('RolloutClient needs a Temporal address and a database URL (TEMPORAL_ADDRESS and DATABASE_URL, or `ratchet dev`)');
    const namespace = options.namespace ?? config.temporal.namespace;
    const connection = await connectClient(address, config.temporal);
    const pool = await openDatabase(databaseUrl, { max: 4 }).catch(async (error) => {
      await connection.close();
      throw error;
    });
    try {
      await ensureSearchAttributes(connection, namespace);
    } catch (error) {
      await Promise.all([connection.close(), pool.end()]);
      throw error;
    }
    const close = async () => {
      await Promise.all([connection.close(), pool.end()]);
    };
    return new RolloutClient(new Client({ connection, namespace }), pool, databaseUrl, { close });
  }

  /** Wraps connections the caller owns (and closes): `close()` then leaves them open. */
  static fromConnections(temporal: Client, pool: pg.Pool, databaseUrl: string): RolloutClient {
    return new RolloutClient(temporal, pool, databaseUrl, { close: async () => undefined });
  }

  /**
   * Submits each problem as a group of `samples` trajectories. They wait for admission under the run's bound,
   * so submitting far ahead is fine. Resubmitting a group changes nothing and comes back as a duplicate.
   * Every request is validated first: an invalid one throws `InvalidTrajectoryRequest` and nothing starts.
   */
  async submit(run: RunConfig, problems: readonly Problem[], options: SubmitOptions): Promise<SubmittedGroup[]> {
    const planned = problems.map((problem) => {
      const groupId = groupIdOf(run.runId, problem.qid, options.tag);
      const requests = Array.from({ length: options.samples }, (_, sample) =>
        trajectoryRequest(problem, {
          trajectoryId: `${groupId}/${sample}`,
          options: options.rollout,
          group: { run, groupId, size: options.samples, sample },
          timeouts: options.timeouts,
        }),
      );
      return { groupId, qid: problem.qid, requests };
    });
    // The run exists before any workflow starts: a consumer can ask for it at once, and settings that
    // contradict an existing run fail here rather than in every trajectory.
    await ensureRun(this.pool, runConfigSchema.parse(run));
    // Recorded before any workflow starts, so the run's submitted and queued counts include every group at once.
    await recordSubmissions(
      this.pool,
      planned.flatMap(({ requests }) => requests.map((request) => request.trajectoryId)),
    );
    const groups: SubmittedGroup[] = [];
    for (const { groupId, qid, requests } of planned) {
      const started = await Promise.all(requests.map((request) => submitTrajectory(this.temporal, request)));
      groups.push({ groupId, qid, trajectoryIds: requests.map((r) => r.trajectoryId), duplicate: started.every((s) => s.duplicate) });
    }
    return groups;
  }

  /** Waits for the trajectories of these groups; a failed trajectory comes back as a failed result. */
  async wait(groups: readonly SubmittedGroup[]): Promise<TrajectoryResult[]> {
    const ids = groups.flatMap((group) => group.trajectoryIds.map((id) => ({ id, qid: group.qid })));
    return Promise.all(
      ids.map(
        ({ id, qid }) =>
          this.temporal.workflow
            .getHandle(id)
            .result()
            .catch((error: unknown) => failedResult({ trajectoryId: id, qid, problem: '', gold: [] }, error)) as Promise<TrajectoryResult>,
      ),
    );
  }

  /** Streams groups of a run as they finish, each once, in the order of the transactions that finished them, until `signal` aborts. */
  async *completions(runId: string, options: { signal?: AbortSignal; pollMs?: number } = {}): AsyncGenerator<FinishedGroup> {
    // The cursor is the transaction that finished a group, not its finished_at: a group whose transaction commits
    // after a later one's would fall behind a finished_at cursor and never be yielded (migration 020).
    let after: [string, string] = ['0', ''];
    while (!options.signal?.aborted) {
      const rows = await finishedGroupsAfter(this.pool, runId, after);
      for (const { finishedXid: _, ...group } of rows) yield group;
      if (rows.length > 0) after = [rows.at(-1)!.finishedXid, rows.at(-1)!.groupId];
      else await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
    }
  }

  /** Cancels a group or a whole run: waiting groups are never admitted, running trajectories are cancelled. */
  async cancel(target: { runId: string } | { groupId: string }): Promise<number> {
    const members = await cancelGroups(this.pool, target);
    await Promise.all(
      members.map((id) =>
        this.temporal.workflow
          .getHandle(id)
          .cancel()
          .catch((error: unknown) => {
            if (!(error instanceof WorkflowNotFoundError)) throw error;
          }),
      ),
    );
    return members.length;
  }

  /** Claims the oldest `batchSize` finished groups of the run; undefined if none came in time. Acknowledge it once trained on. */
  consume(runId: string, batchSize: number, options: ConsumeOptions = {}): Promise<Batch | undefined> {
    return consumeBatch(this.pool, this.databaseUrl, {
      runId,
      batchSize,
      consumer: options.consumer ?? `pid-${process.pid}`,
      leaseMs: options.leaseMs ?? 600_000,
      waitMs: options.waitMs ?? 600_000,
      partial: options.partial ?? false,
    });
  }

  ack(batchId: string): Promise<{ alreadyAcknowledged: boolean }> {
    return acknowledgeBatch(this.pool, batchId);
  }

  extendLease(batchId: string, leaseMs: number): Promise<Date> {
    return extendLease(this.pool, batchId, leaseMs);
  }

  status(runId: string): Promise<RunStatus | undefined> {
    return runStatus(this.pool, runId);
  }

  /**
   * Records what one optimiser step did (loss, mean_reward, parity_*, version_lag_*, ... any numbers by name) and the
   * policy version published after it, for the run page's charts. Recording a step again replaces it. Throws
   * `InvalidTrainingStep` for a negative step or a non-finite metric, `UnknownRun` for a run never submitted to.
   */
  recordTrainingStep(runId: string, step: number, policyVersion: number, metrics: Record<string, number>): Promise<void> {
    return recordTrainingStep(this.pool, runId, step, policyVersion, metrics);
  }

  /** The run's recorded steps, in step order. */
  trainingSteps(runId: string): Promise<TrainingStep[]> {
    return trainingSteps(this.pool, runId);
  }

  close(): Promise<void> {
    return this.owned.close();
  }
}

import { WorkflowFailedError, type Client } from '@temporalio/client';
import type pg from 'pg';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { TrajectoryRequest, TrajectoryResult } from '../workflows/trajectory-state.js';
import type { TurnRecord } from '../trajectory/turn.js';
import { FailureType, failureOf, type FailureClass, type TrajectoryFailure } from '../trajectory/failure.js';
import { submitTrajectory } from './submit.js';
import { recordSubmissions } from '../store/read/run-aggregates.js';

export interface RunProgress {
  onSubmitted?(total: number, duplicates: number): void;
  onFinished?(result: TrajectoryResult, done: number): void;
}

/**
 * Submits every request, then waits for each trajectory, turning a failed workflow into a failed result. Given the
 * pool, the submissions are recorded in Postgres first (idempotently), so the run's backlog shows before workers
 * start on it.
 */
export async function runRollouts(
  client: Client,
  requests: readonly TrajectoryRequest[],
  progress: RunProgress = {},
  pool?: pg.Pool,
): Promise<TrajectoryResult[]> {
  if (pool)
    await recordSubmissions(
      pool,
      requests.map((request) => request.trajectoryId),
    );
  const submitted = await startAll(client, requests);
  progress.onSubmitted?.(submitted.length, submitted.filter((s) => s.duplicate).length);
  let done = 0;
  return Promise.all(
    submitted.map(async ({ request, handle }) => {
      const result = await handle.result().catch((error: unknown) => failedResult(request, error));
      progress.onFinished?.(result, ++done);
      return result;
    }),
  );
}

/** Workflow starts in flight at once: one at a time, 10,000 starts took minutes of round trips. */
const STARTS_IN_FLIGHT = 32;

/** Starts every request, a bounded number at a time, and returns them in the order given. */
async function startAll(client: Client, requests: readonly TrajectoryRequest[]) {
  const submitted: ({ request: TrajectoryRequest } & Awaited<ReturnType<typeof submitTrajectory>>)[] = new Array(requests.length);
  let next = 0;
  const starter = async () => {
    for (let i = next++; i < requests.length; i = next++) submitted[i] = { request: requests[i]!, ...(await submitTrajectory(client, requests[i]!)) };
  };
  await Promise.all(Array.from({ length: Math.min(STARTS_IN_FLIGHT, requests.length) }, starter));
  return submitted;
}

/** What a failed workflow reports in details[0]: the turns it finished and, since failure types, why it failed. */
interface FailureDetails {
  turns?: TurnRecord[];
  failureType?: string;
  failureClass?: FailureClass;
}

/** A failed workflow as a failed result, with the turns it finished and its failure type and class. */
export function failedResult(request: TrajectoryRequest, error: unknown): TrajectoryResult {
  if (!(error instanceof WorkflowFailedError)) throw error;
  const cause = error.cause;
  const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as FailureDetails | undefined) : undefined;
  const turns = Array.isArray(details?.turns) ? details.turns : [];
  const message = cause?.message ?? error.message;
  return {
    trajectoryId: request.trajectoryId,
    qid: request.qid,
    status: 'failed',
    layout: request.options?.layout ?? 'seed',
    turns,
    rewards: [],
    outputTokens: turns.reduce((sum, t) => sum + t.outputLen, 0),
    error: message,
    ...failureOfWorkflow(cause, details, message),
  };
}

/**
 * The type and class of a workflow's failure: from its details when it reports them, else from the failure's
 * own type. `TrajectoryFailed` without details comes from a release before failure types: its message is all
 * there is to go on.
 */
function failureOfWorkflow(cause: Error | undefined, details: FailureDetails | undefined, message: string): Omit<TrajectoryFailure, 'message'> {
  if (typeof details?.failureType === 'string') return failureOf(message, details);
  if (cause instanceof CancelledFailure) return failureOf(message, { failureType: FailureType.Cancelled });
  if (cause instanceof ApplicationFailure && cause.type && cause.type !== 'TrajectoryFailed') return failureOf(message, { failureType: cause.type });
  return failureOf(message.replace(/^trajectory \S+ failed at turn \d+: /, ''));
}

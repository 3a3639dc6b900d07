import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TrajectoryRequest, TrajectoryResult } from '../workflows/trajectory-state.js';
import type { TurnRecord } from '../trajectory/turn.js';
import { submitTrajectory } from './submit.js';

export interface RunProgress {
  onSubmitted?(total: number, duplicates: number): void;
  onFinished?(result: TrajectoryResult, done: number): void;
}

/** Submits every request, then waits for each trajectory, turning a failed workflow into a failed result. */
export async function runRollouts(client: Client, requests: readonly TrajectoryRequest[], progress: RunProgress = {}): Promise<TrajectoryResult[]> {
  const submitted = [];
  for (const request of requests) submitted.push({ request, ...(await submitTrajectory(client, request)) });
  progress.onSubmitted?.(submitted.length, submitted.filter((s) => s.duplicate).length);
  let done = 0;
  return Promise.all(submitted.map(async ({ request, handle }) => {
    const result = await handle.result().catch((error: unknown) => failedResult(request, error));
    progress.onFinished?.(result, ++done);
    return result;
  }));
}

/** A failed workflow as a failed result, with the turns it finished. */
export function failedResult(request: TrajectoryRequest, error: unknown): TrajectoryResult {
  if (!(error instanceof WorkflowFailedError)) throw error;
  const cause = error.cause;
  // The workflow fails with details [{ turns }]: the turns it finished before failing.
  const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as { turns?: TurnRecord[] } | undefined) : undefined;
  const turns = Array.isArray(details?.turns) ? details.turns : [];
  return {
    trajectoryId: request.trajectoryId, qid: request.qid, status: 'failed', layout: request.options?.layout ?? 'seed',
    turns, rewards: [], outputTokens: turns.reduce((sum, t) => sum + t.outputLen, 0), error: cause?.message ?? error.message,
  };
}

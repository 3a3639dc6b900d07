import { ActivityFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { GpuActivities } from '../activities/index.js';
import type { GenerateInput, GenerateResult } from '../activities/generate.js';
import type { ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';
import { GPU_TASK_QUEUE } from '../task-queues.js';

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 } as const;

/**
 * A fallback turn's attempts count from here: above every attempt the turn's own-queue activity can have made (at
 * most `retry.maximumAttempts`), so the fallback claims the turn's checkpoint, resumes from it, and fences off an
 * attempt still running on a stalled worker.
 */
export const FALLBACK_ATTEMPT_BASE = 100;

/** Generates one turn, on the server that generated the trajectory's previous turn when it can. */
export type GenerateTurn = (input: GenerateInput, previousQueue: string | undefined) => Promise<GenerateResult>;

/**
 * Turn affinity (release 5). A turn after the first is sent to the task queue of the server that generated the one
 * before, where its prompt, earlier answers and feedback are still in the prefix cache; when no worker there starts
 * it within `affinityFallbackSeconds` (the server is gone, draining, or full), Temporal times the task out before it
 * starts and the turn goes to the shared queue. The timeout holds for each attempt: a worker killed mid-turn costs its
 * heartbeat timeout, then at most the fallback time, and the fallback resumes from the dead attempt's checkpoint.
 */
export function turnGenerator(timeouts: Partial<ResolvedTrajectoryTimeouts> & Pick<ResolvedTrajectoryTimeouts, 'generateStartToCloseSeconds' | 'generateHeartbeatSeconds'>): GenerateTurn {
  const activityTimeouts = {
    startToCloseTimeout: `${timeouts.generateStartToCloseSeconds}s`, heartbeatTimeout: `${timeouts.generateHeartbeatSeconds}s`, retry,
  } as const;
  const shared = proxyActivities<GpuActivities>({ ...activityTimeouts, taskQueue: GPU_TASK_QUEUE });
  const fallbackSeconds = timeouts.affinityFallbackSeconds ?? 2;
  return async (input, previousQueue) => {
    if (previousQueue === undefined || previousQueue === GPU_TASK_QUEUE) return shared.generate(input);
    const own = proxyActivities<GpuActivities>({ ...activityTimeouts, taskQueue: previousQueue, scheduleToStartTimeout: `${fallbackSeconds}s` });
    try {
      return await own.generate(input);
    } catch (error) {
      if (!notStartedInTime(error)) throw error;
      return shared.generate({ ...input, attemptBase: FALLBACK_ATTEMPT_BASE });
    }
  };
}

function notStartedInTime(error: unknown): boolean {
  return error instanceof ActivityFailure && error.cause instanceof TimeoutFailure && error.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;
}

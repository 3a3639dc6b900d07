import { ActivityFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import { RetryState } from '@temporalio/common';
import { GPU_TASK_QUEUE } from '../task-queues.js';
import { Presets } from './activity-presets.js';
/**
 * A fallback turn's attempts count from here: above the one attempt the turn's own-queue activity makes, so the
 * fallback claims the turn's checkpoint, resumes from it, and fences off an attempt still running on a stalled worker.
 */
export const FALLBACK_ATTEMPT_BASE = 100;
/**
 * Turn affinity (release 5). A turn after the first is sent to the task queue of the server that generated the one
 * before, where its prompt, earlier answers and feedback are still in the prefix cache; when no worker there starts
 * it within `affinityFallbackSeconds` (the server is gone, draining, or full), Temporal times the task out before it
 * starts and the turn goes to the shared queue. The own queue gets one attempt: whatever would be retried (a worker
 * killed mid-turn, noticed by its heartbeat timeout; a server error) is retried on the shared queue at once, from the
 * dead attempt's checkpoint, so a lost server costs one heartbeat timeout, or the fallback time between turns.
 */
export function turnGenerator(timeouts) {
    const shared = proxyActivities(Presets.generation(timeouts));
    // The queue of the server that answered the trajectory's last turn.
    let previousQueue;
    const onServer = async (input) => {
        if (previousQueue === undefined || previousQueue === GPU_TASK_QUEUE)
            return shared.generate(input);
        const own = proxyActivities(Presets.ownServerGeneration(timeouts, previousQueue));
        try {
            return await own.generate(input);
        }
        catch (error) {
            if (!retriedElsewhere(error))
                throw error;
            return shared.generate({ ...input, attemptBase: FALLBACK_ATTEMPT_BASE });
        }
    };
    return async (input) => {
        const output = await onServer(input);
        previousQueue = output.affinityQueue;
        return output;
    };
}
/** Not started in time, timed out, or failed in a way another attempt may fix: not a non-retryable failure, nor a cancel. */
function retriedElsewhere(error) {
    return error instanceof ActivityFailure && !isCancellation(error) && error.retryState !== RetryState.NON_RETRYABLE_FAILURE;
}
//# sourceMappingURL=turn-affinity.js.map
import { FALLBACK_ATTEMPT_BASE } from '../workflows/turn-affinity.js';

/**
 * A generate attempt as a person counts it. The stored attempt (turn_checkpoints, turn_outputs) is a fencing key: a
 * turn that falls back from its server's own queue to the shared one counts from FALLBACK_ATTEMPT_BASE, so that its
 * attempts outrank every attempt before it. That offset is internal: 101 is the first attempt on the shared queue.
 */
export interface TurnAttempt {
  /** Temporal's attempt number on the queue that runs it now (1 = not retried there). */
  attempt: number;
  /** The turn left its server's own queue for the shared one (its server was gone, draining, full, or failed it). */
  fellBack: boolean;
}

export function turnAttempt(stored: number): TurnAttempt {
  return stored > FALLBACK_ATTEMPT_BASE ? { attempt: stored - FALLBACK_ATTEMPT_BASE, fellBack: true } : { attempt: stored, fellBack: false };
}

/** "2", or "1 after fallback": the attempt as the live and trajectory pages print it. */
export function attemptText(stored: number): string {
  const { attempt, fellBack } = turnAttempt(stored);
  return fellBack ? `${attempt} after fallback` : String(attempt);
}

/** What the attempt column means, for its tooltip. */
export const ATTEMPT_DEFINITION =
  "Temporal's attempt of the turn's generate activity on the queue running it now (1 = not retried); " +
  '"after fallback": the turn moved from its server\'s own queue to the shared one, where attempts count again from 1.';

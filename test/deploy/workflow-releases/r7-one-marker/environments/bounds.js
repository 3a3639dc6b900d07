/**
 * The bounds every environment runs under, whatever its language (release 6): the same for a built-in, a user's
 * TypeScript module and a Python environment on its own worker (python/ratchet_rollouts/environment_worker.py holds
 * the same numbers). docs/environments.md, "Bounds", is where a user reads them.
 */
/** Attempts a reset or step gets: a crash, a throw or a deadline passed is retried until this many have failed. */
export const ENVIRONMENT_ATTEMPTS = 5;
/**
 * One step's observations, in characters all together. They are tokenized into the context (a 512 KiB observation is
 * far past any model's window) and pass through Temporal's history on the way from an environment's own worker.
 */
export const MAX_OBSERVATION_CHARS = 512 * 1024;
/** The state a step hands to the next, as JSON: it travels in the workflow's history with every step. */
export const MAX_STATE_BYTES = 64 * 1024;
/** Seconds the slowest built-in step needs: a code answer's tests (a minute at most, RATCHET_CODE_ANSWER_TIMEOUT_S) and its margin. */
export const SLOW_STEP_SECONDS = 120;
/**
 * The longest an environment step can take before its trajectory fails: every attempt's deadline and Temporal's
 * retry back-off between them (1 s doubling). With the defaults: 5 × 60 s + 15 s = 315 s.
 */
export function worstCaseSeconds(bounds) {
    let backoff = 0;
    for (let i = 0; i < bounds.attempts - 1; i++)
        backoff += Math.min(2 ** i, 30);
    return bounds.attempts * bounds.seconds + backoff;
}
//# sourceMappingURL=bounds.js.map
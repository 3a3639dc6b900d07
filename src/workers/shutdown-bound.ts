/**
 * How long a worker's shutdown may wait for its in-flight activities before the SDK gives up on them
 * (`shutdownForceTime`: `run()` then rejects with GracefulShutdownPeriodExpiredError, and the attempts are retried
 * elsewhere once their timeouts pass). Activities are cancelled at once on shutdown (`shutdownGraceTime` 0), but
 * one that ignores its cancellation (an environment's hung step) held `ratchet dev` and `ratchet worker` past
 * SIGTERM for a minute or more (issue 36).
 */
export const WORKER_SHUTDOWN_FORCE_TIME = '5 seconds';

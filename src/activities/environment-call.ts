import { Context } from '@temporalio/activity';
import type { EnvironmentBounds } from '../environments/bounds.js';
import { EnvironmentFailure } from '../environments/environment.js';
import { FailureType } from '../trajectory/failure.js';

/**
 * Runs an in-process environment's reset or step (user code: it may throw, hang or never settle) within the
 * bounds the workflow gave (release 6): a deadline per attempt, and a last attempt whose failure is not retried.
 * Whatever it throws becomes an `EnvironmentFailure` naming the environment, the attempt and the cause; failures
 * of our own around it (Postgres) are not counted here, and keep their own retries.
 *
 * A step that blocks the event loop (a synchronous endless loop) cannot be timed out in-process: documented in
 * docs/environments.md, where such environments are sent to their own worker.
 */
export async function boundedEnvironmentCall<T>(what: string, bounds: EnvironmentBounds | undefined, call: () => Promise<T>): Promise<T> {
  // Release 5 ran environment code unbounded: its runs keep doing so.
  if (bounds === undefined) return call();
  const attempt = Context.current().info.attempt;
  const last = attempt >= bounds.attempts;
  const of = `attempt ${attempt} of ${bounds.attempts}`;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new EnvironmentFailure(`${what} did not answer within ${bounds.seconds} s (${of}; environmentStepSeconds)`, 'infrastructure', {
            failureType: FailureType.EnvironmentTimeout,
            retryable: !last,
          }),
        ),
      bounds.seconds * 1000,
    );
  });
  try {
    return await Promise.race([call(), deadline]);
  } catch (error) {
    if (error instanceof EnvironmentFailure) {
      if (!error.retryable || !last) throw error;
      throw new EnvironmentFailure(`${error.message} (${of}: not retried again)`, error.failureClass, {
        failureType: error.failureType,
        retryable: false,
      });
    }
    const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new EnvironmentFailure(`${what} threw ${cause} (${of}${last ? ': not retried again' : ''})`, 'infrastructure', { retryable: !last });
  } finally {
    clearTimeout(timer);
  }
}

import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { boundedEnvironmentCall } from '../../src/activities/environment-call.js';
import { classifyFailure } from '../../src/activities/failures.js';
import { ENVIRONMENT_ATTEMPTS, worstCaseSeconds } from '../../src/environments/bounds.js';
import { EnvironmentFailure } from '../../src/environments/environment.js';

const bounds = { attempts: ENVIRONMENT_ATTEMPTS, seconds: 0.2 };

/** What the activity would fail with on `attempt`, as Temporal sees it (type, retry). */
async function failureOn(attempt: number, call: () => Promise<unknown>) {
  try {
    await new MockActivityEnvironment({ attempt }).run(() => boundedEnvironmentCall('guess step of turn 0', bounds, call));
  } catch (error) {
    const failure = classifyFailure(error) as { type?: string; nonRetryable?: boolean; message: string };
    return { type: failure.type, nonRetryable: failure.nonRetryable, message: failure.message };
  }
  throw new Error('the call did not fail');
}

describe('an in-process environment runs bounded (release 6)', () => {
  it('retries a throw until the last attempt, then fails it typed and not retried, naming the cause', async () => {
    const bug = () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'board')"));
    expect(await failureOn(1, bug)).toEqual({
      type: 'EnvironmentError',
      nonRetryable: false,
      message: expect.stringMatching(/guess step of turn 0 threw TypeError: Cannot read .*attempt 1 of 5/),
    });
    expect(await failureOn(5, bug)).toEqual({
      type: 'EnvironmentError',
      nonRetryable: true,
      message: expect.stringMatching(/attempt 5 of 5: not retried again/),
    });
  });

  it('fails a step that never answers at its deadline, typed EnvironmentTimeout, within the bound', async () => {
    const started = performance.now();
    const hang = () => new Promise<never>(() => undefined);
    expect(await failureOn(2, hang)).toEqual({
      type: 'EnvironmentTimeout',
      nonRetryable: false,
      message: expect.stringMatching(/did not answer within 0.2 s \(attempt 2 of 5/),
    });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await failureOn(5, hang)).toMatchObject({ type: 'EnvironmentTimeout', nonRetryable: true });
  });

  it('keeps what the environment says of its own failure; a data failure is never retried', async () => {
    const refused = () => Promise.reject(new EnvironmentFailure('this board cannot be played', 'data'));
    expect(await failureOn(1, refused)).toMatchObject({ type: 'EnvironmentDataError', nonRetryable: true });
    const flaky = () => Promise.reject(new EnvironmentFailure('the game server is down', 'infrastructure'));
    expect(await failureOn(1, flaky)).toMatchObject({ type: 'EnvironmentError', nonRetryable: false });
    expect(await failureOn(5, flaky)).toMatchObject({ type: 'EnvironmentError', nonRetryable: true });
  });

  it('answers as the environment did when it answers in time, and runs release 5 steps unbounded', async () => {
    expect(await new MockActivityEnvironment({ attempt: 5 }).run(() => boundedEnvironmentCall('step', bounds, async () => 'ok'))).toBe('ok');
    const late = () => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 300));
    expect(await new MockActivityEnvironment({ attempt: 1 }).run(() => boundedEnvironmentCall('step', undefined, late))).toBe('late');
  });

  it('documents its worst case: five attempts of the deadline and the back-off between them', () => {
    expect(worstCaseSeconds({ attempts: 5, seconds: 60 })).toBe(315);
  });
});

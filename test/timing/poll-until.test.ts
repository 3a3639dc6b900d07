import { describe, expect, it } from 'vitest';
import { pollUntil, PollTimeout } from '../../src/timing/poll-until.js';

describe('pollUntil', () => {
  it('resolves with the first value that is done', async () => {
    let calls = 0;
    expect(await pollUntil(() => ++calls, { what: 'three calls', timeoutMs: 5_000, intervalMs: 1, done: (n) => n >= 3 })).toBe(3);
  });

  it('times out saying what it waited for and what it last saw', async () => {
    const error = await pollUntil(() => ({ running: 2 }), {
      what: 'no request running',
      timeoutMs: 50,
      intervalMs: 10,
      done: (m) => m.running === 0,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PollTimeout);
    expect((error as PollTimeout).message).toBe('timed out after 50 ms waiting for no request running; last saw {"running":2}');
    expect((error as PollTimeout).lastSeen).toEqual({ running: 2 });
  });

  it('counts a check that throws as not done, and names the error on timeout', async () => {
    let calls = 0;
    expect(
      await pollUntil(
        () => {
          if (++calls < 3) throw new Error('ECONNREFUSED');
          return true;
        },
        { what: 'a server', timeoutMs: 5_000, intervalMs: 1 },
      ),
    ).toBe(true);
    const error = await pollUntil(
      () => {
        throw new Error('ECONNREFUSED');
      },
      { what: 'a server', timeoutMs: 30, intervalMs: 5 },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/waiting for a server; last saw Error: ECONNREFUSED$/);
  });

  it('ends at once when abortIf throws or a check throws a fatal error', async () => {
    await expect(
      pollUntil(() => false, {
        what: 'a server',
        timeoutMs: 60_000,
        abortIf: () => {
          throw new Error('exited with code 1');
        },
      }),
    ).rejects.toThrow('exited with code 1');
    await expect(
      pollUntil(
        () => {
          throw new RangeError('bad');
        },
        { what: 'x', timeoutMs: 60_000, fatal: (e) => e instanceof RangeError },
      ),
    ).rejects.toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { Teardown } from '../../src/stack/teardown.js';

describe('a teardown', () => {
  it('runs its steps last added first', async () => {
    const ran: string[] = [];
    const teardown = new Teardown();
    for (const name of ['postgres', 'temporal', 'workers'])
      teardown.add(name, () => {
        ran.push(name);
      });
    await teardown.run();
    expect(ran).toEqual(['workers', 'temporal', 'postgres']);
  });

  it('runs every step even when an earlier one throws, and keeps the failure', async () => {
    const ran: string[] = [];
    const teardown = new Teardown();
    teardown.add('postgres', () => {
      ran.push('postgres');
    });
    teardown.add('temporal', async () => {
      throw new Error('already gone');
    });
    teardown.add('workers', () => {
      ran.push('workers');
    });
    await teardown.run();
    expect(ran).toEqual(['workers', 'postgres']);
    expect(teardown.failures.map((failure) => [failure.name, (failure.error as Error).message])).toEqual([['temporal', 'already gone']]);
  });

  it('runs each step once however often it is asked', async () => {
    let stops = 0;
    const teardown = new Teardown();
    teardown.add('postgres', async () => {
      stops += 1;
    });
    await Promise.all([teardown.run(), teardown.run()]);
    await teardown.run();
    expect(stops).toBe(1);
  });

  it('takes down what a failed start brought up, and rethrows why it failed', async () => {
    const ran: string[] = [];
    const teardown = new Teardown();
    const start = teardown.guard(async () => {
      teardown.add('postgres', () => {
        ran.push('postgres');
      });
      throw new Error('UI port taken');
    });
    await expect(start).rejects.toThrow('UI port taken');
    expect(ran).toEqual(['postgres']);
  });
});

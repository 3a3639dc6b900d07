import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exitOf, exitStatus, stopChild } from '../../src/stack/child-process.js';
import { pollUntil } from '../../src/timing/poll-until.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the child-process helper', () => {
  it('stops a child that ignores SIGTERM with SIGKILL once the grace period is over, and reads its status', async () => {
    const child = spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000)'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await new Promise((resolve) => child.stdout.once('data', resolve));
    const started = performance.now();
    const exit = await stopChild(child, { graceMs: 300 });
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(exitStatus(exit)).toBe(137);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await stopChild(child)).toEqual(exit); // stopping a stopped child is a no-op
  });

  it('reads a code and a signal as the shell does', () => {
    expect(exitStatus({ code: 3, signal: null })).toBe(3);
    expect(exitStatus({ code: null, signal: 'SIGINT' })).toBe(130);
    expect(exitStatus({ code: null, signal: 'SIGTERM' })).toBe(143);
  });

  it.skipIf(process.platform !== 'linux')('ties a child to its parent: the parent SIGKILLed, the child dies too', async () => {
    // A parent that starts a tied `sleep` and prints its pid; then the parent is SIGKILLed and stops nothing.
    // The built helper (`npm test` compiles before vitest runs).
    const script = `import { spawnTied } from ${JSON.stringify(new URL('../../dist/stack/child-process.js', import.meta.url).pathname)};
const child = spawnTied('sleep', ['600'], { stdio: 'ignore' }); console.log(child.pid); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))));
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    await exitOf(parent);
    try {
      await pollUntil(() => !alive(pid), { what: `tied child ${pid} to die`, timeoutMs: 5_000, intervalMs: 50 });
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { fenced, marker, nameProcess, processesLeft, SANDBOXES, task } from './sandbox-fixtures.js';

// Each hostile answer must be contained (the worker and the machine unchanged), scored with a verdict, and
// leave the sandbox able to judge the next answer: under the tool the pool picks (bubblewrap where it is
// installed, as CI installs it) and under the unshare floor.
describe.each(SANDBOXES)('$name contains a hostile answer', ({ tool }) => {
  const sandbox = new CodeSandboxPool({ concurrency: 2, ...(tool ? { tool } : {}) });

  async function expectStillJudging(): Promise<void> {
    const verdict = await verifyCodeAnswer(task(['5']), fenced('print(sum(range(3)) + 2)  # a normal answer'), { sandbox });
    expect(verdict.status).toBe('correct');
  }

  describe('each attack', () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    const secret = `ratchet-secret-${randomUUID()}`;

    beforeAll(async () => {
      process.env.RATCHET_ISOLATION_PROBE = secret;
      server = createServer((socket) => {
        connections++;
        socket.end('hello\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    afterAll(async () => {
      delete process.env.RATCHET_ISOLATION_PROBE;
      await new Promise((resolve) => server.close(resolve));
    });

    it('a memory hog runs out of its limit: runtime error', async () => {
      const verdict = await verifyCodeAnswer(task(), fenced('blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))'), { sandbox });
      expect(verdict.status).toBe('runtime_error');
      expect(verdict.detail).toContain('MemoryError');
      await expectStillJudging();
    });

    it('a fork bomb hits the process limit and is killed, whole', async () => {
      const name = marker();
      const started = performance.now();
      const verdict = await verifyCodeAnswer(
        task(),
        fenced(`${nameProcess(name)}import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass`),
        { sandbox },
      );
      expect(['timeout', 'runtime_error']).toContain(verdict.status);
      expect(performance.now() - started).toBeLessThan(20_000);
      expect(await processesLeft(name, 5_000)).toEqual([]);
      await expectStillJudging();
    });

    it('an infinite loop times out at the test limit and is killed', async () => {
      const name = marker();
      const started = performance.now();
      const verdict = await verifyCodeAnswer(
        task(['ok'], 1),
        fenced(`${nameProcess(name)}import os\nif os.fork() == 0:\n    os.setsid()  # out of the process group\nwhile True:\n    pass`),
        { sandbox },
      );
      expect(verdict.status).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(await processesLeft(name, 5_000)).toEqual([]);
      await expectStillJudging();
    });

    it("a network connection, even to the worker's own loopback, fails", async () => {
      const code = `import socket
for host, port in (("127.0.0.1", ${port}), ("1.1.1.1", 80), ("example.com", 80)):
    try:
        socket.create_connection((host, port), timeout=1).recv(10)
        print("connected", host)
    except OSError:
        pass
print("ok")`;
      const verdict = await verifyCodeAnswer(task(), fenced(code), { sandbox });
      expect(verdict).toMatchObject({ status: 'correct', detail: expect.stringContaining('exact') });
      expect(connections).toBe(0);
    });

    it('writes outside its directory do not reach the machine', async () => {
      const name = `ratchet-escape-${randomUUID()}`;
      const targets = [`/tmp/${name}`, `/usr/${name}`, `${process.cwd()}/${name}`, `/root/${name}`];
      const code = `for path in ${JSON.stringify(targets)}:
    try:
        open(path, "w").write("escaped")
    except OSError:
        pass
open("own-file.txt", "w").write("mine")
print(open("own-file.txt").read() and "ok")`;
      const verdict = await verifyCodeAnswer(task(), fenced(code), { sandbox });
      expect(verdict.status).toBe('correct');
      for (const path of targets) expect(existsSync(path)).toBe(false);
    });

    it("the worker's environment never reaches the answer", async () => {
      expect(process.env.RATCHET_ISOLATION_PROBE).toBe(secret);
      const code = `import os, glob
seen = "${secret}" in repr(dict(os.environ))
for path in glob.glob("/proc/*/environ") + ["/proc/${process.pid}/environ", "/proc/1/environ"]:
    try:
        seen = seen or "${secret}" in open(path, "rb").read().decode("latin-1")
    except OSError:
        pass
print("leaked" if seen else "ok", sorted(os.environ))`;
      const verdict = await verifyCodeAnswer(task(['ok']), fenced(code), { sandbox });
      expect(verdict.status).toBe('wrong');
      expect(verdict.detail).toMatch(/got "ok \[/);
      expect(verdict.detail).not.toContain('leaked');
      expect(verdict.detail).not.toContain('DATABASE_URL');
    });

    it('an answer that signals everything else it can see is judged on what it printed (never a sandbox failure)', async () => {
      // Its parent is the launcher, its namespace's init, which ignores the signals of its namespace: nothing
      // else is there to kill (its own process group, which holds itself, is verdict-causes.test.ts's case).
      const name = marker();
      const code = `${nameProcess(name)}import os, signal\nfor pid in (-1, os.getppid(), 1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\nprint("ok")`;
      const verdict = await verifyCodeAnswer(task(), fenced(code), { sandbox });
      expect(verdict.status).toBe('correct');
      expect(await processesLeft(name, 5_000)).toEqual([]);
      await expectStillJudging();
    });
  });
});

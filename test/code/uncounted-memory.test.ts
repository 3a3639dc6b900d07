import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { fenced, SANDBOXES, task } from './sandbox-fixtures.js';

// Memory that neither RLIMIT_AS nor the summed /proc figures would see must be refused or counted.
describe.each(SANDBOXES)('$name counts or refuses memory outside the address space', ({ tool }) => {
  const sandbox = new CodeSandboxPool({ concurrency: 2, ...(tool ? { tool } : {}) });

  it('refuses sockets: no socket buffers held against a 128 MB limit', async () => {
    // Each end of a socketpair queues ~200 KB in the kernel; 1 GiB of them would pass a 128 MB limit unseen.
    const code = `import socket
held = 0
pairs = []
try:
    while held < 1024:
        a, b = socket.socketpair()
        a.setblocking(False)
        pairs.append((a, b))
        try:
            while True:
                held += a.send(b"x" * 65536) / 2**20
        except BlockingIOError:
            pass
    print("held %d MB" % held)
except OSError as error:
    print("refused" if not pairs else "held %d MB" % held, type(error).__name__)`;
    const verdict = await verifyCodeAnswer(task(['refused PermissionError'], 10, 128), fenced(code), { sandbox });
    expect(verdict).toMatchObject({ status: 'correct' });
    const network = await verifyCodeAnswer(
      task(['refused'], 10, 128),
      fenced(
        'import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n    print("made")\nexcept PermissionError:\n    print("refused")',
      ),
      { sandbox },
    );
    expect(network).toMatchObject({ status: 'correct' });
  });

  it('sees a burst past the limit in the first 250 ms', async () => {
    // Four processes hold 100 MB each for 100 ms right after the start: 400 MB against 256 MB.
    const code = `import os, time
for _ in range(4):
    if os.fork() == 0:
        block = b"x" * (100 << 20)
        time.sleep(0.1)
        os._exit(0)
for _ in range(4):
    os.wait()
print("ok")`;
    const verdict = await verifyCodeAnswer(task(['ok'], 10, 256), fenced(code), { sandbox });
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('memory limit') });
  });

  it('streams a 60 MB input to a solution limited to 128 MB: the launcher never holds it whole', { timeout: 60_000 }, async () => {
    const input = `${'7'.repeat(1023)}\n`.repeat(60 * 1024);
    const code = 'import sys\ntotal = 0\nwhile chunk := sys.stdin.buffer.read(1 << 16):\n    total += len(chunk)\nprint(total)';
    const verdict = await verifyCodeAnswer(
      { tests: { inputs: [input], outputs: [String(input.length)], fnName: '' }, timeoutS: 20, memoryMb: 128 },
      fenced(code),
      { sandbox },
    );
    expect(verdict).toMatchObject({ status: 'correct' });
  });

  it('counts what its tmpfs mounts hold', async () => {
    // 3 × 15 MB in /tmp, /sandbox and /dev/shm, with ~60 MB of its own, against 100 MB: over, while it waits.
    const code = `import time
for place in ("/tmp", "/sandbox", "/dev/shm"):
    with open(place + "/parked", "wb") as sink:
        sink.write(b"x" * (15 << 20))
block = b"y" * (40 << 20)
time.sleep(1)
print("ok")`;
    const verdict = await verifyCodeAnswer(task(['ok'], 10, 100), fenced(code), { sandbox });
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('memory limit') });
  });
});

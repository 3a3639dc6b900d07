import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { interpreterTree } from '../../src/code/sandbox-job.js';
import { fenced, FORGED_VERDICT, marker, nameProcess, processesLeft, SANDBOXES, task } from './sandbox-fixtures.js';

// Issue 23's attacks, each as an answer written to win or to do harm: none may be scored correct, take the
// worker down, outlive its deadline, hold memory no limit counts, read the host or touch another sandbox.
describe.each(SANDBOXES)("$name against issue 23's attacks", ({ tool }) => {
  const sandbox = new CodeSandboxPool({ concurrency: 2, ...(tool ? { tool } : {}) });

  it('forges no verdict: protocol lines written to every descriptor it can reach or steal are its own output', async () => {
    const verdict = await verifyCodeAnswer(task(['ok', 'ok', 'ok'], 1), fenced(FORGED_VERDICT), { sandbox });
    expect(verdict.status).toBe('timeout');
  });

  it('refuses the syscalls that reach other processes, shared kernel state or uncounted memory', async () => {
    // x86_64 numbers; the filter's own table (and aarch64's) is in src/code/seccomp-filter.ts.
    const code = `import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
arm = platform.machine() == "aarch64"
calls = {
    "ptrace": (117 if arm else 101, 16, 1, 0, 0), "process_vm_readv": (270 if arm else 310, 1, 0, 0, 0, 0, 0),
    "pidfd_getfd": (438, 3, 1, 0), "kcmp": (272 if arm else 312, 1, 1, 0, 0, 0), "memfd_create": (279 if arm else 319, b"x", 0),
    "keyctl": (219 if arm else 250, 0, -3, 0), "add_key": (217 if arm else 248, b"user", b"k", b"v", 1, -3),
    "io_uring_setup": (425, 8, 0), "bpf": (280 if arm else 321, 0, 0, 0), "userfaultfd": (282 if arm else 323, 0),
    "shmget": (194 if arm else 29, 0, 1 << 20, 0o1600), "msgget": (186 if arm else 68, 0, 0o1600),
    "unshare_user": (97 if arm else 272, 0x10000000), "clone_newuser": (220 if arm else 56, 0x10000000 | 17, 0, 0, 0, 0),
    "clear_pdeathsig": (167 if arm else 157, 1, 0, 0, 0, 0),
}
allowed = []
for name, (nr, *args) in calls.items():
    result = libc.syscall(nr, *args)
    if result == 0 and name == "clone_newuser":
        os._exit(0)
    if result >= 0:
        allowed.append(name)
print("refused" if not allowed else "allowed: " + " ".join(allowed))`;
    const verdict = await verifyCodeAnswer(task(['refused']), fenced(code), { sandbox });
    expect(verdict.detail).not.toContain('allowed');
    expect(verdict.status).toBe('correct');
  });

  it('turns an endless line, on any descriptor it can steal, into a runtime error; the worker stays up', async () => {
    const code = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
out = 1
pidfd = libc.syscall(434, 1, 0)
if pidfd >= 0 and libc.syscall(438, pidfd, 1, 0) >= 0:
    out = libc.syscall(438, pidfd, 1, 0)
chunk = b"x" * 65536
while True:
    os.write(out, chunk)`;
    const verdict = await verifyCodeAnswer(task(['ok'], 20), fenced(code), { sandbox });
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('output limit') });
  });

  it('ends every process of an answer at its deadline, however it detached, and resolves then', async () => {
    const name = marker();
    const code = `${nameProcess(name)}import os, signal, time
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # no parent-death signal
        os.close(0)
        time.sleep(600)
    os._exit(0)
os.close(1)
os.close(2)
while True:
    pass`;
    const started = performance.now();
    const verdict = await verifyCodeAnswer(task(['ok'], 1), fenced(code), { sandbox });
    expect(verdict.status).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await processesLeft(name, 5_000)).toEqual([]);
  });

  it('kills what an answer left running when its main process exits', async () => {
    const name = marker();
    const code = `${nameProcess(name)}import os, time
print("ok", flush=True)
if os.fork() == 0:
    os.setsid()
    time.sleep(600)  # holds stdout open
os._exit(0)`;
    const started = performance.now();
    const verdict = await verifyCodeAnswer(task(['ok'], 5), fenced(code), { sandbox });
    expect(verdict.status).toBe('correct');
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(await processesLeft(name, 5_000)).toEqual([]);
  });

  it('holds no more than its memory limit in files, memfds or shared memory', async () => {
    // 128 MB allowed; the answer tries to park 200 MB outside its address space in every place it can write.
    const code = `import ctypes, os, mmap
libc = ctypes.CDLL(None, use_errno=True)
chunk = b"x" * (1 << 20)
stored = 0
def fill(fd):
    global stored
    try:
        while stored < 200:
            os.write(fd, chunk)
            stored += 1
    except OSError:
        pass
for place in ("/dev", "/dev/shm", "/tmp", "/sandbox", "/", "/proc"):
    try:
        fill(os.open(place + "/parked", os.O_CREAT | os.O_WRONLY))
    except OSError:
        pass
for _ in range(8):
    fd = libc.syscall(319, b"parked", 0)  # memfd_create
    if fd >= 0:
        fill(fd)
print("contained" if stored < 128 else "escaped %d MB" % stored)`;
    const verdict = await verifyCodeAnswer(task(['contained'], 10, 128), fenced(code), { sandbox });
    expect(verdict.detail).not.toContain('escaped');
    expect(verdict.status).toBe('correct');
  });

  it('holds no more than its memory limit across its processes together', async () => {
    // Each of four processes stays under the 256 MB limit; together they hold 400 MB.
    const code = `import os, time
for _ in range(4):
    if os.fork() == 0:
        block = b"x" * (100 << 20)
        time.sleep(3)
        os._exit(0)
for _ in range(4):
    os.wait()
print("ok")`;
    const verdict = await verifyCodeAnswer(task(['ok'], 10, 256), fenced(code), { sandbox });
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('memory limit') });
  });

  it('sees no host file: no dataset, no worker file, only the interpreter', async () => {
    // The interpreter's tree (the code-python virtualenv by default) shows at its own path, and only it: the folders
    // above it hold nothing else (test/code/code-python.test.ts).
    const tree = interpreterTree(sandbox.config.python)[0];
    const above = (path: string): boolean => tree !== undefined && `${tree}/`.startsWith(`${path}/`);
    const secrets = [
      resolve('data/code-sample.jsonl'),
      resolve('package.json'),
      resolve('.ratchet/python-env'),
      '/etc/passwd',
      '/etc/hostname',
      '/root',
      '/home',
      '/work',
      '/var',
      '/run',
    ].filter((path) => !above(path));
    const allowed = ['usr', 'bin', 'lib', 'lib64', 'sbin', 'proc', 'dev', 'tmp', 'sandbox', ...(tree ? [tree.split('/')[1]] : [])];
    const code = `import os
seen = [path for path in ${JSON.stringify(secrets)} if os.path.exists(path)]
extra = sorted(set(os.listdir("/")) - set(${JSON.stringify(allowed)}))
print("hidden" if not seen and not extra else "seen %s %s" % (seen, extra))`;
    const verdict = await verifyCodeAnswer(task(['hidden']), fenced(code), { sandbox });
    expect(verdict.detail).not.toContain('seen');
    expect(verdict.status).toBe('correct');
  });

  it('runs as a real __main__: multiprocessing works, and closing stdout at the end is fine', async () => {
    const code = `import multiprocessing, sys
def square(x):
    return x * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print(sum(pool.map(square, range(10))))
    sys.stdout.close()`;
    const verdict = await verifyCodeAnswer(task(['285'], 10), fenced(code), { sandbox });
    expect(verdict.status).toBe('correct');
  });

  it('truncates stderr rather than counting it against the output limit', async () => {
    const code = 'import sys\nfor _ in range(40):\n    sys.stderr.write("e" * (1 << 20))\nprint("ok")';
    const verdict = await verifyCodeAnswer(task(['ok'], 10), fenced(code), { sandbox });
    expect(verdict.status).toBe('correct');
  });
});

describe('two worker processes on one host', () => {
  it("never touch each other's sandboxes, with no configuration", async () => {
    // Two pools with default settings stand for two worker processes: one's clean-up must not reach the other.
    const first = new CodeSandboxPool({ concurrency: 2 });
    const second = new CodeSandboxPool({ concurrency: 2 });
    const slow = verifyCodeAnswer(task(['ok'], 10), fenced('import time\ntime.sleep(3)\nprint("ok")'), { sandbox: first });
    const quick = Array.from({ length: 6 }, () => verifyCodeAnswer(task(['ok'], 10), fenced('import os, signal\nprint("ok")'), { sandbox: second }));
    const verdicts = await Promise.all([slow, ...quick]);
    expect(verdicts.map((verdict) => verdict.status)).toEqual(verdicts.map(() => 'correct'));
  });
});

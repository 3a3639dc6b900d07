import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenOf } from '../../src/code/sandbox-kill.js';
import { CodeSandboxPool, verifyCodeAnswer, type CodeTask } from '../../src/code/index.js';
import { fenced, interpreterUnderTmp, SANDBOXES } from './sandbox-fixtures.js';

// All tests of one answer share one sandbox (one bwrap or `unshare`, one Python start), each in a fresh fork of
// the launcher: nothing a test leaves may reach the next. The first test plants state everywhere a solution can
// write (files in each writable place, deep and unreadable trees, the places' own mode, times and extended
// attributes, module globals, the environment, processes that detach and keep writing, a POSIX message queue,
// bytes it printed left in the memory a fork inherits); every later test looks for each and prints what it found.
// Where the interpreter's tree (sys.prefix) lies under /tmp, the folders on the way to it are the sandbox's, not a
// test's: the first test plants there too, and tries to write into the tree itself.
const PLANT_AND_PROBE = `import ctypes, os, re, sys, time
QUEUE = b"/ratchet-leak"
WAY = [folder for folder in ("/" + "/".join(sys.prefix.split("/")[1:end]) for end in range(2, sys.prefix.count("/") + 1)) if folder.startswith("/tmp/")]
def found_in(folder):
    found = []
    for name in os.listdir(folder):
        path = folder + "/" + name
        if path in WAY:
            if os.stat(path).st_mode & 0o777 == 0o701:
                found.append(path + "'s mode")
            found += found_in(path)
        elif path != sys.prefix and name != "solution.py":
            found.append(path)
    return found
def message_queue():
    try:
        librt = ctypes.CDLL("librt.so.1", use_errno=True)
    except OSError:
        return -1
    librt.mq_open.restype = ctypes.c_int
    return librt.mq_open(QUEUE, os.O_RDONLY)
if input() == "plant":
    for place in ("/sandbox", "/tmp", "/dev/shm"):
        with open(place + "/left", "w") as left:
            left.write("from test 1")
    for folder in WAY:
        with open(folder + "/left", "w") as left:
            left.write("from test 1")
        os.chmod(folder, 0o701)
    try:
        open(sys.prefix + "/left", "w").close()
    except OSError:
        pass
    os.makedirs("/tmp/a/b/c/d")
    open("/tmp/a/b/c/d/deep", "w").close()
    os.makedirs("/sandbox/closed/inner")
    os.chmod("/sandbox/closed/inner", 0)
    os.chmod("/sandbox/closed", 0)
    os.symlink("/usr", "/tmp/link")
    try:
        os.setxattr("/sandbox", "user.left", b"from test 1")
    except OSError:
        pass
    os.utime("/tmp", (12345, 12345))
    os.chmod("/dev/shm", 0o701)
    import math
    math.left = "from test 1"
    os.environ["LEFT"] = "from test 1"
    try:
        librt = ctypes.CDLL("librt.so.1", use_errno=True)
        librt.mq_open(QUEUE, os.O_CREAT | os.O_RDWR, 0o600, None)
    except OSError:
        pass
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                with open("/tmp/late", "w") as late:
                    late.write("from test 1")
                time.sleep(0.01)
        os._exit(0)
    for _ in range(10):
        os.write(1, b"Q" * 6000)
        time.sleep(0.01)
else:
    time.sleep(0.2)
    leaks = []
    for place in ("/sandbox", "/tmp", "/dev/shm"):
        leaks += found_in(place)
    if os.path.exists(sys.prefix + "/left"):
        leaks.append("a file in the interpreter's tree")
    if not os.path.isdir(sys.prefix + "/lib"):
        leaks.append("no interpreter's tree")
    try:
        leaks += ["xattr " + name for name in os.listxattr("/sandbox")]
    except OSError:
        pass
    if os.stat("/tmp").st_mtime == 12345:
        leaks.append("/tmp's times")
    if os.stat("/dev/shm").st_mode & 0o777 == 0o701:
        leaks.append("/dev/shm's mode")
    import math
    if hasattr(math, "left"):
        leaks.append("a module global")
    if "LEFT" in os.environ:
        leaks.append("the environment")
    others = [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) not in (1, os.getpid())]
    if others:
        leaks.append("processes %s" % others)
    if message_queue() >= 0:
        leaks.append("a message queue")
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            start, end = (int(part, 16) for part in line.split()[0].split("-"))
            if "r" not in line.split()[1]:
                continue
            try:
                mem.seek(start)
                if re.search(rb"Q{5000}", mem.read(end - start)):
                    leaks.append("test 1's output in memory")
                    break
            except (OSError, ValueError, OverflowError):
                pass
    print("clean" if not leaks else "left: " + ", ".join(leaks))
`;

const TASK: CodeTask = {
  tests: { inputs: ['plant\n', 'probe\n', 'probe\n'], outputs: ['Q'.repeat(60000), 'clean', 'clean'], fnName: '' },
  timeoutS: 5,
  memoryMb: 256,
};

// Each sandbox with the installed interpreter, and with one under /tmp (a project checked out there): the sandbox's
// fresh /tmp must neither hide that tree nor count it as a test's leftover.
const INTERPRETERS = [
  { interpreter: 'the installed interpreter', underTmp: false },
  { interpreter: 'an interpreter under /tmp', underTmp: true },
];
const CASES = SANDBOXES.flatMap((sandbox) => INTERPRETERS.map((interpreter) => ({ ...sandbox, ...interpreter })));

describe.each(CASES)('$name with $interpreter between the tests of one answer', ({ tool, underTmp }) => {
  let sandbox: CodeSandboxPool;
  let copy: ReturnType<typeof interpreterUnderTmp> | undefined;
  beforeAll(() => {
    copy = underTmp ? interpreterUnderTmp() : undefined;
    sandbox = new CodeSandboxPool({ concurrency: 1, ...(tool ? { tool } : {}), ...(copy ? { python: copy.python } : {}) });
  });
  afterAll(() => copy?.remove());

  it(
    'leaves nothing of a test to the next: files, modes, times, attributes, globals, environment, processes, queues, memory',
    { timeout: 30_000 },
    async () => {
      const verdict = await verifyCodeAnswer(TASK, fenced(PLANT_AND_PROBE), { sandbox });
      expect(verdict.detail).toMatch(/^all 3 tests passed/);
      expect(verdict.status).toBe('correct');
    },
  );

  it('gives each test its own input, whole, when an earlier test never read its own (4 MB) or closed it', { timeout: 30_000 }, async () => {
    const code =
      'import os, sys\nfirst = sys.stdin.readline()\nif first.startswith("ignore"):\n    os.close(0)\nelse:\n    print(len(first + sys.stdin.read()))';
    const big = `ignore\n${'x'.repeat(4 << 20)}\n`;
    const inputs = [big, 'abc\n', big, `${'y'.repeat(100_000)}\n`];
    const verdict = await verifyCodeAnswer(
      { tests: { inputs, outputs: ['', '4', '', '100001'], fnName: '' }, timeoutS: 5, memoryMb: 256 },
      fenced(code),
      { sandbox },
    );
    expect(verdict.detail).toMatch(/^all 4 tests passed/);
  });

  it("runs all of an answer's tests in one sandbox: one sandbox start, whatever the number of tests", { timeout: 30_000 }, async () => {
    // The launcher's start time, as each test sees its pid 1: the same for every test of one answer.
    const code = 'print(open("/proc/1/stat").read().rsplit(")", 1)[1].split()[19])';
    const tests = sandbox.answer({ code, fnName: '', timeoutS: 5, memoryMb: 256 });
    try {
      const starts = [];
      for (let i = 0; i < 3; i++) {
        const run = await tests.run('', 5000);
        starts.push(run.kind === 'exited' ? run.stdout.toString().trim() : run.kind);
      }
      expect(new Set(starts).size).toBe(1);
    } finally {
      tests.close();
    }
  });

  it("runs the next test in a fresh sandbox when the last one's launcher died or does not answer within 2 s", { timeout: 30_000 }, async () => {
    const tests = sandbox.answer({
      code: 'print(open("/proc/1/stat").read().rsplit(")", 1)[1].split()[19])',
      fnName: '',
      timeoutS: 5,
      memoryMb: 256,
    });
    const launcher = (): number => childrenOf(tests.sandboxPid ?? 0)[0] ?? 0;
    const start = async (): Promise<string> => {
      const run = await tests.run('', 5000);
      expect(run).toMatchObject({ kind: 'exited', code: 0 });
      return run.kind === 'exited' ? run.stdout.toString().trim() : '';
    };
    try {
      const first = await start();
      process.kill(launcher(), 'SIGKILL');
      const second = await start();
      expect(second).not.toBe(first);
      expect(await start()).toBe(second);
      process.kill(launcher(), 'SIGSTOP');
      const started = performance.now();
      expect(await start()).not.toBe(second);
      expect(performance.now() - started).toBeLessThan(8000);
    } finally {
      tests.close();
    }
  });

  // Only the layout under /tmp has a folder on the way that a test can move (defined only there: nothing skipped).
  if (underTmp)
    it(
      'runs the next test in a fresh sandbox when a test moved the folder on the way to the interpreter, which stays in place',
      { timeout: 30_000 },
      async () => {
        // The folder is on the sandbox's /tmp, the test's to rename; the read-only tree inside it moves with it.
        const code = `import os, sys
way = os.path.dirname(sys.prefix)
if input() == "move":
    os.rename(way, way + "-moved")
    os.symlink(way + "-moved", way)
start = open("/proc/1/stat").read().rsplit(")", 1)[1].split()[19]
print(start, os.path.isdir(sys.prefix + "/lib"), sorted(os.listdir("/tmp")))`;
        const tests = sandbox.answer({ code, fnName: '', timeoutS: 5, memoryMb: 256 });
        const way = copy?.python.split('/')[2];
        try {
          const seen = [];
          for (const input of ['stay\n', 'move\n', 'stay\n', 'stay\n']) {
            const run = await tests.run(input, 5000);
            seen.push(run.kind === 'exited' ? run.stdout.toString().trim().split(' ') : [run.kind]);
          }
          const [first, moved, fresh, again] = seen.map(([start, ...rest]) => ({ start, rest: rest.join(' ') }));
          expect(first?.rest).toBe(`True ['${way}']`);
          expect(moved?.start).toBe(first?.start);
          expect(fresh?.start).not.toBe(first?.start);
          expect(fresh?.rest).toBe(`True ['${way}']`);
          expect(again).toEqual(fresh);
        } finally {
          tests.close();
        }
      },
    );
});

# The Python that runs one answer's tests inside its sandbox, run as `python -I -S -c` (src/code/launcher-source.ts
# reads this file; src/code/sandbox-command.ts puts floor_confinement.py before it under the `unshare` floor). It
# never runs solution code itself, and nothing a solution does speaks for the judge: the worker reads the verdict
# from the solution's own stdout (in call mode, the return value written there) and its exit status.
# In order, it:
# - reads the job (code, limits; never an expected output) from fd 3, which it closes;
# - under the `unshare` floor, builds the sandbox's root (`confine_floor`, defined before this source) and
#   installs the seccomp filter (no_new_privs first), which bwrap has already installed otherwise;
# - closes every descriptor it inherited beyond stdio and fd 4, whatever the worker's process held open;
# - prepares what every test needs (site-packages, the integer-digit limit), once;
# - for each test (`<bytes>\n<input>` on stdin; the input's end ends the sandbox): writes one byte on fd 4 (this
#   test starts; before the first, a failure is the sandbox's) and forks the solution's process, which gets fresh
#   pipes as stdin, stdout and stderr (so that `open("/dev/stdin")` works as for any process), no other
#   descriptor, its rlimits, and runs the code as a real `__main__` from `/sandbox/solution.py` (stdin mode), or
#   calls `fn_name` with the JSON arguments read from stdin and writes the JSON of its return value to stdout
#   (call mode; what the solution prints goes to /dev/null);
# - stays the PID namespace's init: it relays the pipes to the worker, ends the sandbox as soon as the worker
#   is gone (fd 4 hangs up: the sandbox's life is tied to the worker's, whatever killed it), and once the
#   solution's process ends writes its real end on fd 4: `exit N` or `signal N`, its own CPU seconds, whether its
#   CPU-time limit fired, and the bytes of stdout and stderr relayed;
# - then (`clean`) kills every other process of the namespace, empties the writable places and zeroes its
#   buffers, so that the next test's fork starts from nothing of this one.
# The solution cannot reach the launcher: init ignores the signals of its namespace it has no handler for (SIGINT
# is ignored), the launcher is not dumpable (no /proc/1/mem, /proc/1/fd), and ptrace and pidfd_getfd are refused.
# Annotations use built-in types only (nothing imported for them): this runs once per answer.
import ctypes
import os
import resource
import sys

# Fields apart by NUL, the code last (see encodeJob); no json here, whose import costs more than the rest.
with open(3, "rb") as channel:
    fields = channel.read().split(b"\0", 8)
fn_name = fields[0].decode()
timeout_s, memory_mb, max_processes, max_file_bytes, max_open_files = (float(field) for field in fields[1:6])
seccomp, floor, code = fields[6].decode(), fields[7].decode(), fields[8].decode("utf-8", "surrogateescape")
del fields
if floor:
    confine_floor(floor, int(max_file_bytes))  # type: ignore[name-defined]  # noqa: F821 (floor_confinement.py)

# Numeric libraries start a thread per core; under the process limit one is enough.
for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = "1"
SOLUTION = "/sandbox/solution.py"

def install_seccomp(program: bytes) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = Fprog(len(program) // 8, ctypes.addressof(filters))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "seccomp")

def limit(kind: int, value: float) -> None:
    resource.setrlimit(kind, (int(value), int(value)))

# Under bwrap the filter is already in place (--seccomp); the floor installs it here.
if seccomp:
    install_seccomp(bytes.fromhex(seccomp))
# Nothing the worker's process held open (a dataset file, another pipe of the host, bwrap's filter) goes further.
os.closerange(5, 2**31 - 1)

libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no /proc/1/mem or /proc/1/fd for the solution; it inherits 0, then sets 1

# What site would give the solution, once for all its tests (the solution gets it through the fork). The
# interpreter starts with -S (site's .pth processing costs as much as the rest of its start): the virtualenv's
# site-packages (numpy) or the system's, and exit/quit/help, but no .pth hook.
import select  # noqa: E402
import signal  # noqa: E402
import site  # noqa: E402
venv = os.path.dirname(os.path.dirname(sys.executable))
if os.path.isfile(venv + "/pyvenv.cfg"):
    sys.prefix = sys.exec_prefix = venv
    site.PREFIXES = [venv]
for packages in site.getsitepackages():
    if os.path.isdir(packages) and packages not in sys.path:
        sys.path.append(packages)
site.setquit()
site.setcopyright()
site.sethelper()
# Integers of any length print and parse, as a judge's own Python would need them to (3.11's limit is 4,300 digits).
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
cpu = int(-(-timeout_s // 1)) + 1
# The places a test may write (each a tmpfs of its own), as they are before the first test: every test after it
# finds them so again (`clean`). Before the first test a place holds nothing of an answer, only what the tool put
# there: when the interpreter's tree lies under /tmp (a project checked out under /tmp), the tool binds it there,
# read-only at its own path over the fresh tmpfs, and makes the directories on the tmpfs that lead to it. Cleaning
# keeps that skeleton as it was: it never enters, counts or removes a mount, and empties and restores the
# directories on the way to one instead of removing them.
PLACES = ("/sandbox", "/tmp", "/dev/shm")

def fresh_places() -> "list[tuple[str, os.stat_result, frozenset[str] | None]]":
    """What the places hold before the first test, each directory before what it holds: every directory of their
    tmpfs (the places first) with the names in it that stay, and every mount below them (no names: never entered)."""
    from stat import S_ISDIR
    tree: "list[tuple[str, os.stat_result, frozenset[str] | None]]" = []
    pending = [(place, os.lstat(place).st_dev) for place in PLACES]
    while pending:
        path, device = pending.pop(0)
        state = os.lstat(path)
        if state.st_dev != device:
            tree.append((path, state, None))
            continue
        names = []
        for name in os.listdir(path):
            below = os.lstat(path + "/" + name)
            if below.st_dev != device or S_ISDIR(below.st_mode):
                names.append(name)
                pending.append((path + "/" + name, device))
        tree.append((path, state, frozenset(names)))
    return tree

FRESH = fresh_places()
# Every byte that passes through the launcher (input, output, the solution's /proc/<pid>/stat) lands in one of
# these buffers, zeroed after each test: a later test's process, a fork of this one, finds nothing of an earlier
# test in the memory it inherits.
CHUNK = 1 << 16
ZEROS = bytes(CHUNK)
BUFFERS = {name: bytearray(CHUNK) for name in ("input", "stdout", "stderr", "stat")}
unread = 0  # bytes of the last test's input the solution never read: skipped before the next frame
PRELUDE = """
from typing import *
import collections, heapq, math, itertools, bisect, functools, re, string, sys, copy, operator
from collections import *
from functools import *
from heapq import *
from itertools import *
from math import *
from bisect import *
"""

def call_solution() -> None:
    import json
    args = [json.loads(line) for line in sys.stdin.read().split("\n") if line.strip()]
    result_fd = os.dup(1)
    null = os.open("/dev/null", os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    ns = {"__name__": "__solution__", "__builtins__": __builtins__}
    exec(PRELUDE, ns)
    exec(compile(code, SOLUTION, "exec"), ns)
    if "Solution" in ns and hasattr(ns["Solution"], fn_name):
        target = getattr(ns["Solution"](), fn_name)  # type: ignore[operator]  # a class, as the solution defines it
    elif callable(ns.get(fn_name)):
        target = ns[fn_name]
    else:
        raise NameError("no class Solution with method %s and no function %s" % (fn_name, fn_name))
    value = target(*args)
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        raise TypeError("%s returned a %s, which JSON cannot hold" % (fn_name, type(value).__name__)) from None
    data = text.encode()
    while data:
        data = data[os.write(result_fd, data):]

def run_main() -> None:
    main = type(sys)("__main__")
    main.__file__ = SOLUTION
    main.__builtins__ = __builtins__  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    sys.argv = [SOLUTION]
    exec(compile(code, SOLUTION, "exec"), main.__dict__)

def read_into(fd: int, name: str, most: int = CHUNK) -> memoryview:
    """One read of `fd` into the buffer `name` (at most `most` bytes): what it gave, as a view of the buffer."""
    buffer = BUFFERS[name]
    view = memoryview(buffer)[:most]
    return view[:os.readv(fd, [view])]

def write_all(fd: int, view: memoryview) -> None:
    while view:
        view = view[os.write(fd, view):]

def wait_readable(fd: int) -> None:
    """Waits until `fd` can be read; ends the sandbox if the worker is gone meanwhile (fd 4 hangs up)."""
    poller = select.poll()
    poller.register(4, 0)
    poller.register(fd, select.POLLIN)
    if any(ready == 4 for ready, _ in poller.poll()):
        os._exit(1)

def next_frame() -> int:
    """The next test's input length (`<bytes>\n` on fd 0, the input after it); the sandbox ends at the input's end."""
    global unread
    while unread:
        wait_readable(0)
        skipped = len(read_into(0, "input", min(unread, CHUNK)))
        if not skipped:
            os._exit(0)
        unread -= skipped
    header = b""
    while not header.endswith(b"\n"):
        wait_readable(0)
        byte = os.read(0, 1)
        if not byte or len(header) > 20:
            os._exit(0)
        header += byte
    return int(header)

def relay(pid: int, length: int, stdin_w: int, stdout_r: int, stderr_r: int) -> bytes:
    """Moves stdio between the worker and the solution until the solution's process ends; then its end, as a line."""
    global unread
    ended = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(4, 0)  # hang-up and errors only: the worker is gone
    poller.register(ended, select.POLLIN)
    targets = {stdout_r: 1, stderr_r: 2}
    counts = {1: 0, 2: 0}
    for fd in targets:
        poller.register(fd, select.POLLIN)
    # The input moves a chunk at a time, from the worker's socket to the solution's pipe once it has room: it is
    # never held whole here, where it would count against the solution's memory.
    os.set_blocking(stdin_w, False)
    unread = length
    if unread:
        poller.register(0, select.POLLIN)
    else:
        os.close(stdin_w)
        stdin_w = -1
    pending = memoryview(b"")
    try:
        while True:
            for fd, _ in poller.poll():
                if fd == 4:
                    os._exit(1)
                if fd == ended:
                    return ending(pid, targets, counts)
                if fd == 0:
                    poller.unregister(0)
                    pending = read_into(0, "input", min(unread, CHUNK))
                    if not pending:
                        os._exit(0)  # the worker closed the input mid-frame: it is done with this sandbox
                    unread -= len(pending)
                    poller.register(stdin_w, select.POLLOUT)
                elif fd == stdin_w:
                    try:
                        pending = pending[os.write(stdin_w, pending):]
                    except BlockingIOError:
                        continue
                    except OSError:
                        poller.unregister(stdin_w)  # the solution closed its stdin: the rest of the input has nowhere to go
                        os.close(stdin_w)
                        stdin_w = -1
                        continue
                    if not pending:
                        poller.unregister(stdin_w)
                        if unread:
                            poller.register(0, select.POLLIN)
                        else:
                            os.close(stdin_w)  # the whole input is in: the solution reads its end
                            stdin_w = -1
                elif not forward(fd, targets[fd], counts):
                    poller.unregister(fd)
    finally:
        os.close(ended)
        if stdin_w >= 0:
            os.close(stdin_w)

def forward(fd: int, target: int, counts: dict[int, int]) -> bool:
    """Moves what one read of `fd` gives to `target`, whole, and counts it; false at the end of `fd`."""
    chunk = read_into(fd, "stdout" if target == 1 else "stderr")
    write_all(target, chunk)
    counts[target] += len(chunk)
    return bool(chunk)

def ending(pid: int, targets: dict[int, int], counts: dict[int, int]) -> bytes:
    # Its own CPU time, read before it is reaped (the status alone cannot tell the CPU limit's SIGKILL from any other).
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    stat_fd = os.open("/proc/%d/stat" % pid, os.O_RDONLY)
    try:
        stat = read_into(stat_fd, "stat")
    finally:
        os.close(stat_fd)
    fields = bytes(stat[BUFFERS["stat"].rfind(b")", 0, len(stat)) + 1:]).split()  # after the name, which the solution chooses
    seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = os.waitpid(pid, 0)[1]
    # What it wrote before it ended is in the pipes; what the processes it left keep writing is not waited for.
    for fd in targets:
        os.set_blocking(fd, False)
        for _ in range(64):
            try:
                if not forward(fd, targets[fd], counts):
                    break
            except BlockingIOError:
                break
    sent = b" out %d err %d\n" % (counts[1], counts[2])
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        cpu_limit = number in (24, 9) and seconds >= cpu - 0.1  # SIGXCPU at the soft limit, SIGKILL at the hard one
        return b"signal %d cpu %.3f cpu_limit %d" % (number, seconds, cpu_limit) + sent
    return b"exit %d cpu %.3f cpu_limit 0" % (os.WEXITSTATUS(status), seconds) + sent

def end_survivors() -> None:
    """Kills every process of the sandbox but this one (init), and reaps them: none is left when it returns."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # from init: every other process of its PID namespace, however it detached
        except ProcessLookupError:
            pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return  # init has no child: the namespace holds no other process (every orphan becomes init's)

def keep_skeleton() -> None:
    """Checks that every directory and mount the places held before the first test is still where it was, and opens
    each directory to its owner (a test may have closed it); ends the sandbox otherwise. A directory on the way to
    the interpreter's tree lies on /tmp's tmpfs, where a test may rename it (the mount moves with it, and cleaning
    would then meet the mount where it expects none): the next test runs in a fresh sandbox, as after any test that
    broke this one."""
    for path, fresh, names in FRESH:
        try:
            state = os.lstat(path)  # each directory above was opened and checked first: no link on the way
        except OSError:
            os._exit(1)
        if (state.st_dev, state.st_ino) != (fresh.st_dev, fresh.st_ino):
            os._exit(1)
        if names is not None:
            os.chmod(path, 0o700)

def empty(directory: str, kept: frozenset[str]) -> None:
    """Removes everything in `directory` but the names in `kept`, without a path longer than a name or a descriptor
    per level."""
    os.chdir(directory)
    below: "list[str]" = []
    while True:
        sub = None
        with os.scandir(".") as entries:
            for entry in entries:
                if not below and entry.name in kept:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    sub = entry.name
                else:
                    os.unlink(entry.name)
        if sub is not None:
            os.chmod(sub, 0o700, follow_symlinks=False)
            os.chdir(sub)
            below.append(sub)
        elif below:
            os.chdir("..")
            os.rmdir(below.pop())
        else:
            break

def restore(directory: str, fresh: os.stat_result) -> None:
    """Gives `directory` back its mode, times and (no) extended attributes as before the first test."""
    for name in os.listxattr(directory):
        os.removexattr(directory, name)
    os.chmod(directory, fresh.st_mode & 0o7777)
    os.utime(directory, ns=(fresh.st_atime_ns, fresh.st_mtime_ns))

def clean() -> None:
    """After a test: no process, file, or byte of it is left for the next test."""
    end_survivors()
    keep_skeleton()
    for path, _, names in FRESH:
        if names is not None:
            empty(path, names)
    for path, fresh, names in reversed(FRESH):  # a directory's mode last: it may close what it holds
        if names is not None:
            restore(path, fresh)
    os.chdir("/sandbox")

# The tests, one after another: each in a fresh fork of this clean process, which never runs solution code itself.
# What the launcher holds now is frozen out of the collector's reach: a fork's collections (its last one at exit)
# then never walk it, which would copy every page of it into the fork.
import gc  # noqa: E402
gc.freeze()
first = True
while True:
    if not first:
        clean()
    first = False
    length = next_frame()
    for buffer in BUFFERS.values():
        buffer[:] = ZEROS
    with open(SOLUTION, "w", errors="surrogateescape") as source:
        source.write(code)
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    os.write(4, b"R")  # this test starts: its deadline counts from here
    solution = os.fork()
    if not solution:
        break
    for fd in (stdin_r, stdout_w, stderr_w):
        os.close(fd)
    write_all(4, memoryview(relay(solution, length, stdin_w, stdout_r, stderr_r)))
    os.close(stdout_r)
    os.close(stderr_r)
    del stdin_r, stdin_w, stdout_r, stdout_w, stderr_r, stderr_w, solution, length

# The solution's process: a fork of the clean launcher, for this test only.
signal.signal(signal.SIGINT, signal.default_int_handler)
libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1: the solution's own /proc/self as any process has it
for fd, target in ((stdin_r, 0), (stdout_w, 1), (stderr_w, 2)):
    os.dup2(fd, target)
os.closerange(3, 2**31 - 1)
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
limit(resource.RLIMIT_NPROC, max_processes)
limit(resource.RLIMIT_FSIZE, max_file_bytes)
limit(resource.RLIMIT_NOFILE, max_open_files)
limit(resource.RLIMIT_CORE, 0)
limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
try:
    call_solution() if fn_name else run_main()
finally:
    # A solution may close its stdout when done: that is no error of its own.
    for stream in ("stdout", "stderr"):
        try:
            getattr(sys, stream).flush()
        except Exception:
            setattr(sys, stream, None)

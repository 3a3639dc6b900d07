# The Python that starts one test inside the sandbox, run as `python -I -c` (src/code/launcher-source.ts reads this
# file; src/code/sandbox-command.ts puts floor_confinement.py before it under the `unshare` floor). It is trusted
# only until the solution runs, and nothing it does after that speaks for the judge: the worker reads the verdict
# from the solution's own stdout (in call mode, the return value the launcher writes there) and its exit status.
# In order, it:
# - reads the job (code, limits; never the expected output) from fd 3, which it closes;
# - under the `unshare` floor, builds the sandbox's root (`confine_floor`, defined before this source) and
#   installs the seccomp filter (no_new_privs first), which bwrap has already installed otherwise;
# - closes every descriptor it inherited beyond stdio and fd 4, whatever the worker's process held open;
# - writes one byte on fd 4: the sandbox is ready, so a failure before it is the sandbox's;
# - forks the solution, which gets fresh pipes as stdin, stdout and stderr (so that `open("/dev/stdin")` works as
#   for any process), no other descriptor, its rlimits, and runs the code as a real `__main__` from
#   `/sandbox/solution.py` (stdin mode), or calls `fn_name` with the JSON arguments read from stdin and writes the
#   JSON of its return value to stdout (call mode; what the solution prints goes to /dev/null);
# - stays the PID namespace's init: it relays the pipes to the worker, ends the sandbox as soon as the worker
#   is gone (fd 4 hangs up: the sandbox's life is tied to the worker's, whatever killed it), and once the
#   solution's process ends writes its real end on fd 4: `exit N` or `signal N`, its own CPU seconds, and
#   whether its CPU-time limit fired. Exiting then, as init, kills whatever the solution left.
# The solution cannot reach the launcher: init ignores the signals of its namespace it has no handler for (SIGINT
# is ignored), the launcher is not dumpable (no /proc/1/mem, /proc/1/fd), and ptrace and pidfd_getfd are refused.
# Annotations use built-in types only (nothing imported for them): this runs before every test.
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
with open(SOLUTION, "w", errors="surrogateescape") as source:
    source.write(code)

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
stdin_r, stdin_w = os.pipe()
stdout_r, stdout_w = os.pipe()
stderr_r, stderr_w = os.pipe()
cpu = int(-(-timeout_s // 1)) + 1
os.write(4, b"R")
solution = os.fork()

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

def relay(pid: int) -> bytes:
    """Moves stdio between the worker and the solution until the solution's process ends; then its end, as a line."""
    import select
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in (stdin_r, stdout_w, stderr_w):
        os.close(fd)
    ended = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(4, 0)  # hang-up and errors only: the worker is gone
    poller.register(ended, select.POLLIN)
    targets = {stdout_r: 1, stderr_r: 2}
    for fd in targets:
        poller.register(fd, select.POLLIN)
    # The input moves a chunk at a time, from the worker's socket to the solution's pipe once it has room: it is
    # never held whole here, where it would count against the solution's memory.
    os.set_blocking(stdin_w, False)
    poller.register(0, select.POLLIN)
    pending = memoryview(b"")
    while True:
        for fd, _ in poller.poll():
            if fd == 4:
                os._exit(1)
            if fd == ended:
                return ending(pid, targets)
            if fd == 0:
                poller.unregister(0)
                pending = memoryview(os.read(0, 1 << 16))
                if pending:
                    poller.register(stdin_w, select.POLLOUT)
                else:
                    os.close(stdin_w)  # the whole input is in: the solution reads its end
            elif fd == stdin_w:
                try:
                    pending = pending[os.write(stdin_w, pending):]
                except BlockingIOError:
                    continue
                except OSError:
                    poller.unregister(stdin_w)  # the solution closed its stdin: the rest of the input has nowhere to go
                    os.close(stdin_w)
                    continue
                if not pending:
                    poller.unregister(stdin_w)
                    poller.register(0, select.POLLIN)
            elif not forward(fd, targets[fd]):
                poller.unregister(fd)

def forward(fd: int, target: int) -> bool:
    """Moves what one read of `fd` gives to `target`, whole; false at the end of `fd`."""
    chunk = os.read(fd, 1 << 16)
    view = memoryview(chunk)
    while view:
        view = view[os.write(target, view):]
    return bool(chunk)

def ending(pid: int, targets: dict[int, int]) -> bytes:
    # Its own CPU time, read before it is reaped (the status alone cannot tell the CPU limit's SIGKILL from any other).
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    with open("/proc/%d/stat" % pid, "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = os.waitpid(pid, 0)[1]
    # What it wrote before it ended is in the pipes; what the processes it left keep writing is not waited for.
    for fd in targets:
        os.set_blocking(fd, False)
        for _ in range(64):
            try:
                if not forward(fd, targets[fd]):
                    break
            except BlockingIOError:
                break
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        cpu_limit = number in (24, 9) and seconds >= cpu - 0.1  # SIGXCPU at the soft limit, SIGKILL at the hard one
        return b"signal %d cpu %.3f cpu_limit %d\n" % (number, seconds, cpu_limit)
    return b"exit %d cpu %.3f cpu_limit 0\n" % (os.WEXITSTATUS(status), seconds)

if solution:
    record = relay(solution)
    while record:
        record = record[os.write(4, record):]
    os._exit(0)

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
# The interpreter starts with -S (site's .pth processing costs as much as the rest of its start): the solution gets
# what site would give it, but for .pth hooks: the virtualenv's site-packages (numpy) or the system's, and
# exit/quit/help.
import site  # noqa: E402 (after the fork: only the solution pays for it)
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
try:
    call_solution() if fn_name else run_main()
finally:
    # A solution may close its stdout when done: that is no error of its own.
    for stream in ("stdout", "stderr"):
        try:
            getattr(sys, stream).flush()
        except Exception:
            setattr(sys, stream, None)

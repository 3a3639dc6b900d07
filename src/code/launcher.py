# The Python that starts one test inside the sandbox, run as `python -I -c` (src/code/launcher-source.ts reads this
# file; src/code/sandbox-command.ts puts floor_confinement.py before it under the `unshare` floor). It is trusted
# only until the solution runs, and nothing it does after that speaks for the judge: the worker reads the verdict
# from the solution's own stdout (in call mode, the return value the launcher writes there) and its exit status.
# In order, it:
# - reads the job (code, limits; never the expected output) from fd 3, which it closes;
# - under the `unshare` floor, builds the sandbox's root (`confine_floor`, defined before this source) and
#   installs the seccomp filter (no_new_privs first), which bwrap has already installed otherwise;
# - sets the solution's rlimits;
# - writes one byte on fd 4 and closes it: the sandbox is ready, so a failure before it is the sandbox's;
# - runs the code as a real `__main__` from `/sandbox/solution.py` (stdin mode), or calls `fn_name` with the
#   JSON arguments read from stdin and writes the JSON of its return value to stdout (call mode; what the
#   solution prints goes to /dev/null).
# Annotations use built-in types only (nothing imported for them): this runs before every test.
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
    import ctypes
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
cpu = int(-(-timeout_s // 1)) + 1
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
limit(resource.RLIMIT_NPROC, max_processes)
limit(resource.RLIMIT_FSIZE, max_file_bytes)
limit(resource.RLIMIT_NOFILE, max_open_files)
limit(resource.RLIMIT_CORE, 0)
limit(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
os.write(4, b"R")
os.close(4)

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

try:
    call_solution() if fn_name else run_main()
finally:
    # A solution may close its stdout when done: that is no error of its own.
    for stream in ("stdout", "stderr"):
        try:
            getattr(sys, stream).flush()
        except Exception:
            setattr(sys, stream, None)

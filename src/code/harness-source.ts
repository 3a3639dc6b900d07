/**
 * The Python program that runs inside the sandbox, one per answer. It reads the job (code, mode, inputs,
 * limits; never the expected outputs) as one JSON line on stdin, prints `{"ready": true}`, then runs each test
 * in a forked child under setrlimit (address space, CPU seconds, processes, file size) and a wall-clock
 * deadline, and prints one JSON line per test. The comparison happens outside, so an answer that takes over
 * the harness learns nothing it could not compute itself. Between tests every other process in the sandbox's
 * PID namespace is killed, so a child that escaped its process group (setsid, a fork bomb) cannot outlive its
 * test. The harness makes itself non-dumpable so a child cannot open its pipes through /proc.
 */
export const HARNESS_SOURCE = String.raw`
import ctypes, json, os, resource, select, signal, sys, time, traceback
try:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
except Exception:
    pass

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
for name in ("typing", "collections", "heapq", "math", "itertools", "bisect", "functools", "re", "string", "copy", "operator"):
    __import__(name)

# Numeric libraries start a thread per core; under the process limit one is enough.
for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = "1"

job = json.loads(sys.stdin.readline())
out = sys.stdout
def emit(record):
    out.write(json.dumps(record) + "\n")
    out.flush()

def limit_child():
    mb = job["memoryMb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mb, mb))
    cpu = int(job["timeoutS"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_NPROC, (job["maxProcesses"], job["maxProcesses"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (job["maxFileBytes"], job["maxFileBytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

def to_json(value):
    return json.dumps(value, default=lambda o: sorted(o) if isinstance(o, (set, frozenset)) else repr(o))

def run_child(test_input, out_w):
    code = job["code"]
    fn_name = job["fnName"]
    if fn_name:
        ns = {"__name__": "__solution__"}
        exec(PRELUDE, ns)
        exec(compile(code, "<solution>", "exec"), ns)
        if "Solution" in ns and hasattr(ns["Solution"], fn_name):
            target = getattr(ns["Solution"](), fn_name)
        elif callable(ns.get(fn_name)):
            target = ns[fn_name]
        else:
            raise NameError("no class Solution with method %s and no function %s" % (fn_name, fn_name))
        args = [json.loads(line) for line in test_input.split("\n") if line.strip()]
        result = to_json(target(*args))
        os.write(out_w, result.encode())
    else:
        ns = {"__name__": "__main__", "__builtins__": __builtins__}
        exec(compile(code, "<solution>", "exec"), ns)

def start(test_input):
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.dup2(in_r, 0)
            os.dup2(err_w, 2)
            if job["fnName"]:
                # The return value goes to fd 3; what the solution prints is discarded.
                os.dup2(out_w, 3)
                os.dup2(os.open("/dev/null", os.O_WRONLY), 1)
                os.closerange(4, 4096)
            else:
                os.dup2(out_w, 1)
                os.closerange(3, 4096)
            sys.stdin = open(0, "r", closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            limit_child()
            status = 0
            try:
                run_child(test_input, 3)
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            except MemoryError:
                sys.stderr.write("MemoryError: the solution ran out of its memory limit\n")
                status = 3
            except BaseException:
                traceback.print_exc()
                status = 1
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:
                status = status or 1
            os._exit(status)
        except BaseException:
            os._exit(4)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    return pid, in_w, out_r, err_r

def kill_others():
    me = os.getpid()
    # Only inside a PID namespace of our own (we are its first or second process): /proc lists the sandbox alone.
    if me > 2:
        return
    for _ in range(50):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        if not others:
            return
        for p in others:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        time.sleep(0.002)

def run_test(index, test_input):
    pid, in_w, out_r, err_r = start(test_input)
    data = test_input.encode()
    os.set_blocking(in_w, False)
    deadline = time.monotonic() + job["timeoutS"]
    chunks = {out_r: [], err_r: []}
    sizes = {out_r: 0, err_r: 0}
    limit = job["maxOutputBytes"]
    open_fds = [out_r, err_r]
    writing = in_w if data else None
    if writing is None:
        os.close(in_w)
    verdict = None
    while open_fds or writing is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            verdict = "timeout"
            break
        readable, writable, _ = select.select(open_fds, [writing] if writing is not None else [], [], left)
        if writing is not None and writing in writable:
            try:
                sent = os.write(writing, data)
                data = data[sent:]
            except (BrokenPipeError, OSError):
                data = b""
            if not data:
                os.close(writing)
                writing = None
        for fd in readable:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            sizes[fd] += len(chunk)
            if sizes[fd] > limit:
                verdict = "output_limit"
                break
            chunks[fd].append(chunk)
        if verdict:
            break
    if writing is not None:
        os.close(writing)
    status = 0
    while verdict is None:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() >= deadline:
            verdict = "timeout"
        time.sleep(0.001)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    kill_others()
    for fd in (out_r, err_r):
        os.close(fd)
    stdout = b"".join(chunks[out_r]).decode("utf-8", "replace")
    stderr = b"".join(chunks[err_r]).decode("utf-8", "replace")[-2000:]
    if verdict == "timeout":
        return {"test": index, "status": "timeout"}
    if verdict == "output_limit":
        return {"test": index, "status": "runtime_error", "error": "printed more than %d bytes" % limit}
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return {"test": index, "status": "timeout", "error": "killed by signal %d (CPU time limit)" % sig}
        return {"test": index, "status": "runtime_error", "error": "killed by signal %d\n%s" % (sig, stderr)}
    code = os.WEXITSTATUS(status)
    if code != 0:
        return {"test": index, "status": "runtime_error", "error": "exit status %d\n%s" % (code, stderr)}
    return {"test": index, "status": "ran", "stdout": stdout}

emit({"ready": True})
for index, test_input in enumerate(job["inputs"]):
    emit(run_test(index, test_input))
`;

"""Serves a Python `Environment` from a Temporal worker of its own: `ratchet-env serve module:Class` (also
`python -m ratchet_rollouts.environment_worker serve ...`), or `await serve(MyEnvironment)` from code.

The trajectory workflow calls two activities on `ratchet-env-<name>`, with JSON in camelCase:

- `environmentReset(request)` -> `{"messages": [...], "state": ...}`
- `environmentStep(request)` -> `{"observations", "reward", "success", "done", "verdict", "predicted", "detail",
  "info", "state"}`

Nothing outlives a call (the state travels with the workflow), so workers can be added, removed or killed at any
time. Each call heartbeats every `HEARTBEAT_INTERVAL_S` (2 s) while it runs: the workflow gives resets and steps a
heartbeat timeout (`environmentHeartbeatSeconds`, 10 s by default), so a killed worker's step is retried on another
within seconds. Failures reach the workflow typed: `EnvironmentDataError` (non-retryable) for `EnvironmentFailure(...,
"data")` and for anything the workflow cannot use (a malformed request or result, a state that is not JSON, observations
or a state over the bounds of `bounds.py`: a retry of deterministic code would answer the same), naming the field and
the size; `EnvironmentError` for anything else the environment's code raises, retried (the workflow bounds the attempts).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import importlib
import importlib.util
import inspect
import json
import logging
import math
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, TypeVar, cast, get_args

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from .bounds import MAX_OBSERVATION_CHARS, MAX_STATE_BYTES, MAX_VERDICT_CHARS
from .environment import Action, Environment, EnvironmentFailure, EnvironmentTask, FinishReason, StepResult
from .errors import RatchetError
from .process_exit import exit_process
from .settings import temporal_connect_config

RESET_ACTIVITY = "environmentReset"
STEP_ACTIVITY = "environmentStep"
TASK_QUEUE_PREFIX = "ratchet-env-"
#: Failure types the workflow tells apart.
DATA_ERROR = "EnvironmentDataError"
ENVIRONMENT_ERROR = "EnvironmentError"
DEFAULT_MAX_CONCURRENT = 100
#: Seconds between heartbeats while a reset or step runs: the workflow's heartbeat timeout
#: (`timeouts.environmentHeartbeatSeconds`, 10 s by default) notices a killed worker from their absence.
HEARTBEAT_INTERVAL_S = 2.0

_T = TypeVar("_T")


class EnvironmentLoadError(RatchetError, ValueError):
    """`ratchet-env serve` was given something that is not a servable Environment class."""


def task_queue_for(name: str) -> str:
    """The task queue the trajectory workflow sends an environment's activities to."""
    return f"{TASK_QUEUE_PREFIX}{name}"


def environment_name(environment_cls: type[Environment], name: str | None = None) -> str:
    """The name to serve under (the argument, else the class's `name`); TypeError for a class that cannot be served."""
    if not (isinstance(environment_cls, type) and issubclass(environment_cls, Environment)):
        raise TypeError(f"{environment_cls!r} is not a subclass of ratchet_rollouts.environment.Environment")
    if inspect.isabstract(environment_cls):
        missing = ", ".join(sorted(getattr(environment_cls, "__abstractmethods__", ())))
        raise TypeError(f"{environment_cls.__name__} does not implement {missing}")
    resolved = name if name is not None else getattr(environment_cls, "name", None)
    if not isinstance(resolved, str) or not resolved or any(c.isspace() for c in resolved):
        raise TypeError(f"{environment_cls.__name__} needs a name: set `name = \"...\"` on the class (no spaces) or pass one")
    return resolved


class _Malformed(Exception):
    """Something that crossed the activity boundary is not what the contract says (the message names the field)."""


def _non_retryable(message: str) -> ApplicationError:
    """Something the workflow cannot use, which another attempt would answer the same: data, not retried."""
    return ApplicationError(message, type=DATA_ERROR, non_retryable=True)


def json_problem(value: object, where: str) -> str | None:
    """Why `value` would not come back from JSON as itself (None when it would), naming the offending path.

    Exact types only: a tuple would come back a list, an int key a string, an enum or a numpy number a plain value,
    and a restored state that differs from the one saved would make a retried step answer differently."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return None
    if kind is float:
        return None if math.isfinite(cast(float, value)) else f"{where} is {value!r}, which JSON cannot hold"
    if kind is list:
        for index, item in enumerate(cast(list[object], value)):
            problem = json_problem(item, f"{where}[{index}]")
            if problem:
                return problem
        return None
    if kind is dict:
        for key, item in cast(dict[object, object], value).items():
            if type(key) is not str:
                return f"{where} has the key {key!r} ({type(key).__name__}); JSON object keys are strings"
            problem = json_problem(item, f"{where}.{key}")
            if problem:
                return problem
        return None
    if kind is tuple:
        return f"{where} is a tuple; JSON would give it back as a list: use a list"
    return f"{where} is a {kind.__module__}.{kind.__qualname__}, not a JSON value (None, bool, int, float, str, list, dict)"


# The request: what the workflow sends. A malformed one is the caller's bug, and no retry mends it.


def _field(request: Mapping[str, Any], key: str, kind: type[_T], what: str) -> _T:
    if key not in request:
        raise _Malformed(f"{key} is missing")
    value = request[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Malformed(f"{key} is {value!r}, not {what}")
    return value


def _task(request: object) -> EnvironmentTask:
    if not isinstance(request, Mapping):
        raise _Malformed(f"the request is a {type(request).__name__}, not an object")
    gold = _field(request, "gold", list, "a list of strings")
    if not all(isinstance(g, str) for g in gold):
        raise _Malformed(f"gold is {gold!r}, not a list of strings")
    args = request.get("args")
    if args is None:
        args = {}
    elif not isinstance(args, dict):
        raise _Malformed(f"args is {args!r}, not an object or null")
    return EnvironmentTask(
        trajectory_id=_field(request, "trajectoryId", str, "a string"),
        qid=_field(request, "qid", str, "a string"),
        environment=_field(request, "environment", str, "a string"),
        problem=_field(request, "problem", str, "a string"),
        gold=tuple(gold),
        args=args,
        seed=_field(request, "seed", int, "an integer"),
    )


def _action(request: Mapping[str, Any]) -> Action:
    reason = _field(request, "finishReason", str, "a string")
    if reason not in get_args(FinishReason):
        raise _Malformed(f"finishReason is {reason!r}, not one of {', '.join(get_args(FinishReason))}")
    return Action(
        turn=_field(request, "turn", int, "an integer"),
        text=_field(request, "text", str, "a string"),
        finish_reason=cast(FinishReason, reason),
    )


# The result: what the environment's code answered. A malformed one would be answered again by a retry.


def _messages(value: object, where: str) -> list[dict[str, str]]:
    if not isinstance(value, (list, tuple)):
        raise _Malformed(f"{where} is a {type(value).__name__}, not a list of messages")
    checked = []
    for index, message in enumerate(cast(Sequence[object], value)):
        at = f"{where}[{index}]"
        if not isinstance(message, Mapping):
            raise _Malformed(f"{at} is {message!r}, not a message {{'role': ..., 'content': ...}}")
        extra = sorted(str(k) for k in message if k not in ("role", "content"))
        if extra:
            raise _Malformed(f"{at} has keys other than role and content: {', '.join(extra)}")
        role, content = message.get("role"), message.get("content")
        if not isinstance(role, str) or not role.strip():
            raise _Malformed(f"{at}.role is {role!r}, not a role name (user, tool, system, ...)")
        if not isinstance(content, str):
            raise _Malformed(f"{at}.content is {content!r}, not a string")
        checked.append({"role": role, "content": content})
    chars = sum(len(m["content"]) for m in checked)
    if chars > MAX_OBSERVATION_CHARS:
        raise _Malformed(f"{where} hold {chars} characters, over the {MAX_OBSERVATION_CHARS} a step may add")
    return checked


def _step_result(result: object) -> dict[str, Any]:
    if not isinstance(result, StepResult):
        raise _Malformed(f"the result is a {type(result).__name__}, not a StepResult")
    reward = result.reward
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise _Malformed(f"reward is {reward!r}, not a number")
    if not math.isfinite(reward):
        raise _Malformed(f"reward is {reward!r}, not a finite number")
    for key in ("success", "done"):
        if not isinstance(getattr(result, key), bool):
            raise _Malformed(f"{key} is {getattr(result, key)!r}, not a bool")
    verdict = result.verdict
    if not isinstance(verdict, str) or not verdict or len(verdict) > MAX_VERDICT_CHARS:
        raise _Malformed(f"verdict is {verdict!r}, not a label of 1 to {MAX_VERDICT_CHARS} characters")
    for key in ("predicted", "detail"):
        if getattr(result, key) is not None and not isinstance(getattr(result, key), str):
            raise _Malformed(f"{key} is {getattr(result, key)!r}, not a string or None")
    if not isinstance(result.info, dict):
        raise _Malformed(f"info is a {type(result.info).__name__}, not a dict")
    problem = json_problem(result.info, "info")
    if problem:
        raise _Malformed(problem)
    return {
        "observations": _messages(result.observations, "observations"),
        "reward": float(reward),
        "success": result.success,
        "done": result.done,
        "verdict": verdict,
        "predicted": result.predicted,
        "detail": result.detail,
        "info": result.info,
    }


def _state(environment: Environment) -> dict[str, Any]:
    state = {key: value for key, value in vars(environment).items() if key != "task"}
    problem = json_problem(state, "self")
    if problem:
        raise _Malformed(
            f"the state (the instance's attributes) is not JSON: {problem}. Keep plain values on self; keep "
            "connections, generators and models at class or module level"
        )
    size = len(json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > MAX_STATE_BYTES:
        raise _Malformed(
            f"the state (the instance's attributes) is {size} bytes of JSON, over the {MAX_STATE_BYTES} a state may hold "
            "(keep large things in the environment, keyed by the trajectory id)"
        )
    return state


class EnvironmentActivities:
    """The two activities for one Environment class: pass `[activities.reset, activities.step]` to a Worker (what
    `build_environment_worker` does). They can also be awaited directly, outside Temporal, as the tests do."""

    def __init__(self, environment_cls: type[Environment], name: str | None = None) -> None:
        self.environment_cls = environment_cls
        self.name = environment_name(environment_cls, name)

    @activity.defn(name=RESET_ACTIVITY)
    async def reset(self, request: dict[str, Any]) -> dict[str, Any]:
        """Starts an episode: a fresh instance's `reset`, its messages and its attributes as the state."""
        task = self._checked(f"malformed {RESET_ACTIVITY} request", lambda: self._task(request))
        environment = await self._run(f"{self.environment_cls.__name__}.reset", lambda: self._restored(task, None))
        start = await self._run(f"{self.environment_cls.__name__}.reset", lambda: environment.reset(task))
        where = f"{self.environment_cls.__name__}.reset returned a malformed result"
        messages = self._checked(where, lambda: _messages([{"role": "user", "content": start}] if isinstance(start, str) else start, "messages"))
        if not messages:
            raise _non_retryable(f"{where}: messages is empty; an episode starts from at least one message")
        return {"messages": messages, "state": self._checked(where, lambda: _state(environment))}

    @activity.defn(name=STEP_ACTIVITY)
    async def step(self, request: dict[str, Any]) -> dict[str, Any]:
        """Takes one turn: an instance restored from the request's state, its `step`, the result and the new state."""
        task = self._checked(f"malformed {STEP_ACTIVITY} request", lambda: self._task(request))
        action = self._checked(f"malformed {STEP_ACTIVITY} request", lambda: _action(request))
        state = request.get("state")
        if not isinstance(state, dict):
            raise _non_retryable(f"malformed {STEP_ACTIVITY} request: state is {state!r}, not the object environmentReset returned")
        environment = await self._run(f"{self.environment_cls.__name__}.step", lambda: self._restored(task, state))
        result = await self._run(f"{self.environment_cls.__name__}.step", lambda: environment.step(action))
        where = f"{self.environment_cls.__name__}.step returned a malformed result"
        answer = self._checked(where, lambda: _step_result(result))
        return {**answer, "state": self._checked(where, lambda: _state(environment))}

    def _task(self, request: object) -> EnvironmentTask:
        task = _task(request)
        if task.environment != self.name:
            raise _Malformed(f"environment is {task.environment!r}, but this worker serves {self.name!r}")
        return task

    async def _restored(self, task: EnvironmentTask, state: dict[str, Any] | None) -> Environment:
        """A fresh instance with the episode's attributes: `__init__`'s defaults, then the state over them."""
        environment = self.environment_cls()
        if state is not None:
            # A copy: the environment may mutate what it restored, and the caller's request must stay as it was.
            environment.__dict__.update(copy.deepcopy(state))
        environment.task = task
        return environment

    @staticmethod
    def _checked(where: str, check: Callable[[], _T]) -> _T:
        try:
            return check()
        except _Malformed as error:
            raise _non_retryable(f"{where}: {error}") from None

    @staticmethod
    async def _run(where: str, call: Callable[[], Awaitable[_T]]) -> _T:
        """Runs the environment's own code, turning what it raises into the failure the workflow expects, and
        heartbeats while it runs (see `heartbeating`)."""
        try:
            async with heartbeating():
                return await call()
        except EnvironmentFailure as failure:
            data = failure.failure_class == "data"
            raise ApplicationError(failure.message, type=DATA_ERROR if data else ENVIRONMENT_ERROR, non_retryable=data) from failure
        except Exception as error:
            raise ApplicationError(f"{where} raised {type(error).__name__}: {error}", type=ENVIRONMENT_ERROR, non_retryable=False) from error


class heartbeating:
    """Heartbeats the running activity every `interval_s` seconds (and once at the start) until the block ends.

    The workflow gives each reset and step a heartbeat timeout, so a worker that dies mid-step is noticed within
    it, and the step retried on another worker, instead of after the whole start-to-close timeout. The heartbeats
    come from a task on the worker's event loop: environment code that blocks the loop stops them too, which is why
    blocking work belongs in `asyncio.to_thread`. Outside an activity (tests awaiting the activities directly) it
    does nothing."""

    def __init__(self, interval_s: float | None = None) -> None:
        self.interval_s = HEARTBEAT_INTERVAL_S if interval_s is None else interval_s
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> heartbeating:
        if activity.in_activity():
            activity.heartbeat()
            self._task = asyncio.create_task(self._beat())
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            activity.heartbeat()


def build_environment_worker(
    client: Client,
    environment_cls: type[Environment],
    *,
    name: str | None = None,
    task_queue: str | None = None,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    graceful_shutdown_s: float = 10.0,
) -> Worker:
    """A Worker serving the environment's two activities, for a process that runs its own workers; `serve` runs one."""
    activities = EnvironmentActivities(environment_cls, name)
    return Worker(
        client,
        task_queue=task_queue or task_queue_for(activities.name),
        activities=[activities.reset, activities.step],
        max_concurrent_activities=max_concurrent,
        graceful_shutdown_timeout=timedelta(seconds=graceful_shutdown_s),
    )


async def serve(
    environment_cls: type[Environment],
    *,
    name: str | None = None,
    task_queue: str | None = None,
    client: Client | None = None,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    graceful_shutdown_s: float = 10.0,
    stop: asyncio.Event | None = None,
) -> None:
    """Serves the environment until `stop` is set or, without one, until SIGTERM or SIGINT; then lets running steps
    finish (up to `graceful_shutdown_s`) and returns. Connects with the environment's settings (TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*; see `settings`) unless given a client. Prints
    `serving environment <name> on task queue <queue>` (flushed) once the worker is started."""
    served = environment_name(environment_cls, name)
    queue = task_queue or task_queue_for(served)
    if client is None:
        client = await Client.connect(**temporal_connect_config())
    worker = build_environment_worker(
        client, environment_cls, name=served, task_queue=queue, max_concurrent=max_concurrent, graceful_shutdown_s=graceful_shutdown_s
    )
    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    if stop is None:
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(signum, stop.set)
                handled.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass
    running = asyncio.create_task(worker.run())
    stopped = asyncio.create_task(stop.wait())
    try:
        print(f"serving environment {served} on task queue {queue}", flush=True)
        await asyncio.wait({running, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # A second Ctrl-C during the graceful wait interrupts it, as usual.
        for signum in handled:
            loop.remove_signal_handler(signum)
        stopped.cancel()
        if not running.done():
            await worker.shutdown()
        await running  # raises the worker's fatal error, if it had one


def _module_from_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise EnvironmentLoadError(f"no such file: {path}")
    # Its own directory first, as `python file.py` would have it: the file may import its neighbours.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    module_name = path.stem if path.stem.isidentifier() and path.stem not in sys.modules else f"ratchet_env:{path}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EnvironmentLoadError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and typing look the module up by name while it runs
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def load_environment(spec: str) -> type[Environment]:
    """The class `spec` names: `package.module:Class` or `path/to/file.py:Class`. Without `:Class`, the one
    Environment subclass the module defines."""
    target, _, class_name = spec.rpartition(":")
    if not target or not class_name.isidentifier():  # no class given (or a Windows drive's colon)
        target, class_name = spec, ""
    if target.endswith(".py") or os.sep in target or "/" in target:
        module = _module_from_file(Path(target).resolve())
    else:
        if os.getcwd() not in sys.path:  # a console script's path lacks the working directory `python -m` has
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as error:
            raise EnvironmentLoadError(f"cannot import {target}: {error}") from error
    if class_name:
        found = getattr(module, class_name, None)
        if not (isinstance(found, type) and issubclass(found, Environment)):
            raise EnvironmentLoadError(f"{target} has no Environment subclass named {class_name}")
        return found
    candidates = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Environment) and value.__module__ == module.__name__ and not inspect.isabstract(value)
    ]
    if len(candidates) != 1:
        names = ", ".join(c.__name__ for c in candidates) or "none"
        raise EnvironmentLoadError(f"{target} defines {len(candidates)} Environment classes ({names}): name one as {target}:Class")
    return candidates[0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ratchet-env",
        description="Serve a Python RL environment to Ratchet's trajectory workflow.",
        epilog="Temporal comes from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS* (or a profile).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve_command = commands.add_parser("serve", help="run a worker for an Environment class until SIGTERM or SIGINT")
    serve_command.add_argument("environment", help="package.module:Class or path/to/file.py:Class (:Class may be left off)")
    serve_command.add_argument("--name", help="the environment's name (default: the class's `name`)")
    serve_command.add_argument("--task-queue", help="the task queue (default: ratchet-env-<name>)")
    serve_command.add_argument("--max-concurrent", type=int, default=DEFAULT_MAX_CONCURRENT, help="activities at once (default: %(default)s)")
    options = parser.parse_args(argv)
    if options.max_concurrent < 1:
        parser.error("--max-concurrent must be at least 1")
    try:
        environment_cls = load_environment(options.environment)
        environment_name(environment_cls, options.name)
    except (EnvironmentLoadError, TypeError) as error:
        print(f"ratchet-env: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    async def run() -> int:
        config = temporal_connect_config()
        try:
            client = await Client.connect(**config)
        except RuntimeError as error:
            print(f"ratchet-env: cannot connect to Temporal at {config['target_host']}: {error}", file=sys.stderr)
            return 1
        await serve(
            environment_cls, name=options.name, task_queue=options.task_queue, client=client, max_concurrent=options.max_concurrent
        )
        return 0

    try:
        return asyncio.run(run())
    except KeyboardInterrupt:  # a second Ctrl-C, during the graceful wait
        return 130


def cli() -> NoReturn:
    """`ratchet-env`: `main`, then out without the interpreter's finalization, which the SDK's runtime threads can
    abort (`Fatal Python error: PyGILState_Release`; see process_exit.py)."""
    exit_process(main())


if __name__ == "__main__":
    cli()

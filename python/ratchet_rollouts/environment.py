"""RL environments written in Python, served to Ratchet's trajectory workflow from a Temporal worker of their own.

Subclass `Environment`, give it a `name`, write `reset` and `step`, and serve it with `ratchet-env serve
module:Class` (see `environment_worker`). The workflow calls two activities on the task queue `ratchet-env-<name>`:
`environmentReset` once per trajectory, then `environmentStep` after each turn of the model.

Durability: the instance's attributes ARE the episode's state. Each activity builds a fresh instance, restores its
attributes from the JSON the workflow carries, runs `reset` or `step`, and hands the attributes back as the new
state. No worker keeps anything between calls, so any worker can take any step, and a step whose worker was killed
is simply run again elsewhere. Two consequences for the code you write:

- attributes must be JSON values (None, bool, int, float, str, lists and dicts with string keys); keep a random
  generator's draws, not the generator, and a connection or a model at class or module level, not on `self`;
- `reset` and `step` must be deterministic functions of the task, the action and the attributes: a retried step
  must answer what the first attempt answered (the workflow keeps the first answer it records). Draw randomness from
  `task.seed` (`random.Random(self.task.seed)`), never from the clock or the global generator.

The steps of many trajectories share the worker's event loop: run blocking work (a subprocess, a slow library call)
with `await asyncio.to_thread(...)`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypedDict

FailureClass = Literal["data", "infrastructure"]
FinishReason = Literal["stop", "length", "abort"]


class Message(TypedDict):
    """A chat message: `role` is any role the model's chat template knows (`system`, `user`, `tool`, ...)."""

    role: str
    content: str


@dataclass(frozen=True)
class EnvironmentTask:
    """What an episode starts from: the trajectory request's fields. Not part of the state (the workflow passes it
    to every call), so it is on `self.task` in `reset` and in every `step`."""

    trajectory_id: str
    qid: str
    #: The environment's name as the request gave it.
    environment: str
    problem: str
    gold: tuple[str, ...]
    #: The request's `environmentArgs` (empty when it had none): a game's range, a tool list.
    args: dict[str, Any]
    #: Derived from the trajectory id: draw from it (`random.Random(task.seed)`) so a re-run draws the same.
    seed: int


@dataclass(frozen=True)
class Action:
    """What the model did in one turn."""

    #: 0 for the answer to the reset's messages, then 1, 2, ...
    turn: int
    #: The turn's decoded output.
    text: str
    #: `stop`: the output ended by itself; `length`: it was cut off at the token limit; `abort`: generation stopped.
    finish_reason: FinishReason


@dataclass
class StepResult:
    """The environment's answer to one turn."""

    #: Added to the conversation after the model's output, before the next turn; may be empty on a last turn.
    observations: list[Message]
    #: The turn's reward (finite), before the run's own scaling.
    reward: float
    #: The turn solved the task (counted as a success, and by early stopping).
    success: bool
    #: The episode is over: no further turn is generated.
    done: bool
    #: A short label for the UI and metrics (at most 64 characters): `correct`, `wrong`, `too_high`, ...
    verdict: str
    #: What was judged (the extracted answer), shown on the trajectory page.
    predicted: str | None = None
    #: Why the verdict is what it is, shown on the trajectory page.
    detail: str | None = None
    #: Free-form JSON kept with the turn.
    info: dict[str, Any] = field(default_factory=dict)


class EnvironmentFailure(Exception):
    """A step the environment cannot take. `data`: this task or this answer cannot be stepped as it is (the
    trajectory fails with a typed error and is not retried); `infrastructure`: something around the environment broke
    (a service it calls is down): the activity is retried, within the workflow's bound. Any other exception counts as
    infrastructure."""

    def __init__(self, message: str, failure_class: FailureClass = "data") -> None:
        if failure_class not in ("data", "infrastructure"):
            raise ValueError(f"failure_class must be 'data' or 'infrastructure', not {failure_class!r}")
        super().__init__(message)
        self.message = message
        self.failure_class: FailureClass = failure_class


class Environment(ABC):
    """Base of a Python environment. A subclass sets `name` and implements `step`; `reset` defaults to the problem
    as one user message.

    The instance is rebuilt for every call: `__init__` takes no arguments and runs before the state is restored, so
    it may set defaults; everything assigned to `self` (but `task`) is the episode's state and must be JSON. See the
    module's docstring for why, and for the determinism a step owes its retries."""

    #: The environment's name: the trajectory request's `environment`, and the task queue `ratchet-env-<name>`.
    name: ClassVar[str]
    #: The episode's task, set before `reset` and before every `step`.
    task: EnvironmentTask

    async def reset(self, task: EnvironmentTask) -> list[Message] | str:
        """Starts the episode: sets up the attributes and returns the first messages (a string is one user
        message). `task` is also on `self.task`."""
        return [{"role": "user", "content": task.problem}]

    @abstractmethod
    async def step(self, action: Action) -> StepResult:
        """Judges one turn of the model against the attributes, updates them and says what comes next. Raise
        `EnvironmentFailure` when the step cannot be taken."""

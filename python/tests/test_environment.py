"""Python environments, through the two activities the trajectory workflow calls, awaited directly (no Temporal):
the state travels only as the JSON they return, failures come out typed, and a malformed answer is named."""

from __future__ import annotations

import asyncio
import json
import math
import random
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from ratchet_rollouts import (
    Action,
    Environment,
    EnvironmentActivities,
    EnvironmentFailure,
    EnvironmentLoadError,
    EnvironmentTask,
    Message,
    StepResult,
    load_environment,
    task_queue_for,
)
from ratchet_rollouts import environment_worker
from ratchet_rollouts.environment_worker import main

REPO = Path(__file__).resolve().parents[2]
GUESS_NUMBER = REPO / "examples" / "environments" / "guess_number.py"
T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def reset_request(environment: str = "counter", **overrides: Any) -> dict[str, Any]:
    request = {"trajectoryId": "traj-1", "qid": "q-1", "environment": environment, "problem": "count to three", "gold": ["3"], "args": None}
    return {**request, "seed": 7, **overrides}


def step_request(reset: dict[str, Any], turn: int, text: str, state: Any, finish_reason: str = "stop") -> dict[str, Any]:
    return {**reset, "turn": turn, "text": text, "finishReason": finish_reason, "state": state}


def through_json(value: Any) -> Any:
    """What the workflow hands back: the value as it comes out of JSON, nothing kept in memory."""
    return json.loads(json.dumps(value, allow_nan=False))


class Counter(Environment):
    """Counts the model's "up"s to the gold number; remembers what it was told, and a draw from the seed."""

    name = "counter"

    def __init__(self) -> None:
        self.history: list[str] = []

    async def reset(self, task: EnvironmentTask) -> str:
        self.target = int(task.gold[0])
        self.count = 0
        self.draw = random.Random(task.seed).random()
        return f"Say 'up' until you reach {self.target}."

    async def step(self, action: Action) -> StepResult:
        assert self.task.qid == "q-1"
        self.count += action.text.split().count("up")
        self.history.append(action.text)
        done = self.count >= self.target
        say: list[Message] = [] if done else [{"role": "user", "content": f"{self.count} so far"}]
        info = {"turn": action.turn, "reason": action.finish_reason}
        return StepResult(say, 1.0 if done else 0.0, done, done, "reached" if done else "counting", predicted=str(self.count), info=info)


def test_an_episode_carries_its_state_only_through_the_json_the_activities_return() -> None:
    start = reset_request()
    reset = run(EnvironmentActivities(Counter).reset(start))
    assert reset["messages"] == [{"role": "user", "content": "Say 'up' until you reach 3."}]
    assert reset["state"] == {"history": [], "target": 3, "count": 0, "draw": random.Random(7).random()}
    state, answers = through_json(reset["state"]), []
    for turn, text in enumerate(["up", "up up"]):
        answer = run(EnvironmentActivities(Counter).step(step_request(start, turn, text, state)))  # a fresh worker each time
        state = through_json(answer.pop("state"))
        answers.append(answer)
    assert answers == [
        {"observations": [{"role": "user", "content": "1 so far"}], "reward": 0.0, "success": False, "done": False, "verdict": "counting",
         "predicted": "1", "detail": None, "info": {"turn": 0, "reason": "stop"}},
        {"observations": [], "reward": 1.0, "success": True, "done": True, "verdict": "reached",
         "predicted": "3", "detail": None, "info": {"turn": 1, "reason": "stop"}},
    ]
    assert state["history"] == ["up", "up up"] and state["count"] == 3


def test_the_same_inputs_give_the_same_outputs_and_the_request_is_left_as_it_was() -> None:
    activities = EnvironmentActivities(Counter)
    start = reset_request()
    first = run(activities.reset(start))
    assert run(activities.reset(reset_request())) == first
    step = step_request(start, 0, "up", through_json(first["state"]))
    before = json.dumps(step)
    results = [run(activities.step(step)) for _ in range(3)]  # a retried step answers what the first did
    assert results[0] == results[1] == results[2]
    assert json.dumps(step) == before  # the environment appended to its history: a copy, not the request's state
    assert run(activities.reset(reset_request(seed=8)))["state"]["draw"] != first["state"]["draw"]


def test_reset_defaults_to_the_problem_as_one_user_message_and_init_sets_defaults() -> None:
    class Plain(Environment):
        name = "plain"

        async def step(self, action: Action) -> StepResult:
            return StepResult([], 0.0, False, True, "done")

    reset = run(EnvironmentActivities(Plain).reset(reset_request("plain", args={"x": 1})))
    assert reset == {"messages": [{"role": "user", "content": "count to three"}], "state": {}}


@pytest.mark.parametrize(
    ("failure", "kind", "non_retryable"),
    [
        (EnvironmentFailure("no such level", "data"), "EnvironmentDataError", True),
        (EnvironmentFailure("no such level"), "EnvironmentDataError", True),
        (EnvironmentFailure("the game server is down", "infrastructure"), "EnvironmentError", False),
        (KeyError("level"), "EnvironmentError", False),
    ],
)
@pytest.mark.parametrize("where", ["reset", "step"])
def test_failures_reach_the_workflow_typed(failure: Exception, kind: str, non_retryable: bool, where: str) -> None:
    class Failing(Environment):
        name = "failing"

        async def reset(self, task: EnvironmentTask) -> str:
            if where == "reset":
                raise failure
            return "play"

        async def step(self, action: Action) -> StepResult:
            raise failure

    activities = EnvironmentActivities(Failing)
    start = reset_request("failing")
    with pytest.raises(ApplicationError) as raised:
        run(activities.reset(start)) if where == "reset" else run(activities.step(step_request(start, 0, "hi", {})))
    assert (raised.value.type, raised.value.non_retryable) == (kind, non_retryable)
    if isinstance(failure, EnvironmentFailure):
        assert raised.value.message == failure.message
    else:
        assert raised.value.message == f"Failing.{where} raised KeyError: 'level'" and raised.value.__cause__ is failure


def test_an_unknown_failure_class_is_refused_where_it_is_raised() -> None:
    with pytest.raises(ValueError, match="failure_class"):
        EnvironmentFailure("x", "transient")  # type: ignore[arg-type]


def answering(result: Any, **attributes: Any) -> type[Environment]:
    class Answering(Environment):
        name = "answering"

        async def step(self, action: Action) -> StepResult:
            self.__dict__.update(attributes)
            return result  # type: ignore[no-any-return]

    return Answering


def ok(**fields: Any) -> StepResult:
    return StepResult(**{"observations": [], "reward": 0.0, "success": False, "done": True, "verdict": "wrong", **fields})


@pytest.mark.parametrize(
    ("result", "named"),
    [
        (ok(reward=math.nan), "reward is nan, not a finite number"),
        (ok(reward=math.inf), "reward is inf"),
        (ok(reward="1"), "reward is '1', not a number"),
        (ok(reward=True), "reward is True, not a number"),
        (ok(success=1), "success is 1, not a bool"),
        (ok(done=None), "done is None, not a bool"),
        (ok(verdict=""), "verdict is '', not a label"),
        (ok(verdict="x" * 65), "verdict is 'xxxx"),
        (ok(predicted=42), "predicted is 42, not a string or None"),
        (ok(detail=b"trace"), "detail is b'trace'"),
        (ok(info=[1]), "info is a list, not a dict"),
        (ok(info={"seen": {1, 2}}), "info.seen is a builtins.set, not a JSON value"),
        (ok(info={"score": math.nan}), "info.score is nan"),
        (ok(observations="too low"), "observations is a str, not a list of messages"),
        (ok(observations=[{"role": "tool"}]), "observations[0].content is None, not a string"),
        (ok(observations=[{"role": "", "content": "x"}]), "observations[0].role is '', not a role name"),
        (ok(observations=[{"role": "tool", "content": "x", "name": "f"}]), "observations[0] has keys other than role and content: name"),
        (ok(observations=["too low"]), "observations[0] is 'too low', not a message"),
        ({"reward": 1}, "the result is a dict, not a StepResult"),
    ],
)
def test_a_malformed_result_is_a_non_retryable_error_naming_the_field(result: Any, named: str) -> None:
    start = reset_request("answering")
    with pytest.raises(ApplicationError) as raised:
        run(EnvironmentActivities(answering(result)).step(step_request(start, 0, "hi", {})))
    assert (raised.value.type, raised.value.non_retryable) == ("EnvironmentDataError", True)
    assert raised.value.message.startswith("Answering.step returned a malformed result: ")
    assert named in raised.value.message


@pytest.mark.parametrize(
    ("attributes", "named"),
    [
        ({"rng": random.Random(1)}, "self.rng is a random.Random, not a JSON value"),
        ({"pair": (1, 2)}, "self.pair is a tuple; JSON would give it back as a list"),
        ({"scores": {1: "a"}}, "self.scores has the key 1 (int)"),
        ({"board": [[0, float("inf")]]}, "self.board[0][1] is inf"),
    ],
)
def test_a_state_that_is_not_json_is_refused_clearly(attributes: dict[str, Any], named: str) -> None:
    start = reset_request("answering")
    with pytest.raises(ApplicationError) as raised:
        run(EnvironmentActivities(answering(ok(), **attributes)).step(step_request(start, 0, "hi", {})))
    assert (raised.value.type, raised.value.non_retryable) == ("EnvironmentDataError", True)
    assert "the state (the instance's attributes) is not JSON: " + named in raised.value.message


def test_a_reset_must_start_from_at_least_one_well_formed_message() -> None:
    class Silent(Environment):
        name = "silent"

        async def reset(self, task: EnvironmentTask) -> list[Any]:
            return self.task.args["messages"]  # type: ignore[no-any-return]

        async def step(self, action: Action) -> StepResult:
            return ok()

    for messages, named in (([], "messages is empty"), ([{"role": "user", "content": 3}], "messages[0].content is 3"), ("x", None)):
        request = reset_request("silent", args={"messages": messages})
        if named is None:
            assert run(EnvironmentActivities(Silent).reset(request))["messages"] == [{"role": "user", "content": "x"}]
            continue
        with pytest.raises(ApplicationError) as raised:
            run(EnvironmentActivities(Silent).reset(request))
        assert raised.value.non_retryable and raised.value.message.startswith("Silent.reset returned a malformed result: ")
        assert named in raised.value.message


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"turn": None}, "malformed environmentStep request: turn is None, not an integer"),
        ({"finishReason": "eos"}, "finishReason is 'eos', not one of stop, length, abort"),
        ({"state": None}, "state is None, not the object environmentReset returned"),
        ({"gold": "3"}, "gold is '3', not a list of strings"),
        ({"args": [1]}, "args is [1], not an object or null"),
        ({"seed": True}, "seed is True, not an integer"),
        ({"environment": "other"}, "environment is 'other', but this worker serves 'counter'"),
    ],
)
def test_a_malformed_request_is_a_non_retryable_error_naming_the_field(change: dict[str, Any], named: str) -> None:
    request = {**step_request(reset_request(), 0, "up", {"target": 3, "count": 0, "history": []}), **change}
    with pytest.raises(ApplicationError) as raised:
        run(EnvironmentActivities(Counter).step(request))
    assert (raised.value.type, raised.value.non_retryable) == ("EnvironmentDataError", True)
    assert named in raised.value.message
    missing = reset_request()
    del missing["qid"]
    with pytest.raises(ApplicationError, match="malformed environmentReset request: qid is missing"):
        run(EnvironmentActivities(Counter).reset(missing))


def test_a_class_that_cannot_be_served_is_refused_before_serving() -> None:
    class Nameless(Environment):
        async def step(self, action: Action) -> StepResult:
            return ok()

    class Abstract(Environment):
        name = "abstract"

    with pytest.raises(TypeError, match="needs a name"):
        EnvironmentActivities(Nameless)
    assert EnvironmentActivities(Nameless, "given").name == "given"
    with pytest.raises(TypeError, match="does not implement step"):
        EnvironmentActivities(Abstract)  # type: ignore[type-abstract]
    assert task_queue_for("guess-number") == "ratchet-env-guess-number"


def test_guess_number_plays_a_whole_game() -> None:
    game = load_environment(f"{GUESS_NUMBER}:GuessNumber")
    assert load_environment(str(GUESS_NUMBER)).__name__ == "GuessNumber"  # the only class in the file
    activities = EnvironmentActivities(game)
    start = reset_request("guess-number", args={"low": 1, "high": 100, "secret": 42})
    reset = run(activities.reset(start))
    assert reset["messages"][0]["role"] == "user" and "from 1 to 100" in reset["messages"][0]["content"]
    state, played = through_json(reset["state"]), []
    for turn, text in enumerate(["50", "Let me try \\boxed{25}.", "hmm, no idea", "37, or rather 42", "42"]):
        answer = run(activities.step(step_request(start, turn, text, state)))
        state = through_json(answer["state"])
        played.append((answer["verdict"], answer["reward"], answer["done"], answer["predicted"], [o["content"] for o in answer["observations"]]))
        if answer["done"]:
            break
    assert played == [
        ("too_high", 0.0, False, "50", ["Too high."]),
        ("too_low", 0.0, False, "25", ["Too low."]),
        ("no_answer", -1.0, False, None, ["I found no number in your answer: answer with \\boxed{n}."]),
        ("correct", 1.0, True, "42", ["Correct!"]),
    ]
    assert answer["success"] and answer["info"] == {"guesses": 3} and all(o["role"] == "tool" for o in answer["observations"])


def test_guess_number_draws_its_secret_from_the_seed_and_a_binary_search_wins() -> None:
    activities = EnvironmentActivities(load_environment(f"{GUESS_NUMBER}:GuessNumber"))
    secrets = set()
    for seed in range(20):
        start = reset_request("guess-number", seed=seed, args={"low": 1, "high": 100})
        state = run(activities.reset(start))["state"]
        assert run(activities.reset(start))["state"] == state and 1 <= state["secret"] <= 100
        secrets.add(state["secret"])
        low, high = 1, 100
        for turn in range(7):
            guess = (low + high) // 2
            answer = run(activities.step(step_request(start, turn, f"\\boxed{{{guess}}}", through_json(state))))
            state = answer["state"]
            verdict = answer["verdict"]
            low, high = (guess + 1, high) if verdict == "too_low" else (low, guess - 1) if verdict == "too_high" else (guess, guess)
            if answer["done"]:
                break
        assert answer["verdict"] == "correct"
    assert len(secrets) > 10


def test_load_environment_names_what_it_cannot_serve(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentLoadError, match="no Environment subclass named Missing"):
        load_environment(f"{GUESS_NUMBER}:Missing")
    with pytest.raises(EnvironmentLoadError, match="no such file"):
        load_environment(str(tmp_path / "absent.py"))
    with pytest.raises(EnvironmentLoadError, match="cannot import no_such_module_here"):
        load_environment("no_such_module_here:Game")
    (tmp_path / "two_games.py").write_text(
        "from ratchet_rollouts import Environment\n"
        "class A(Environment):\n    name = 'a'\n    async def step(self, action): ...\n"
        "class B(A):\n    name = 'b'\n"
    )
    with pytest.raises(EnvironmentLoadError, match=r"defines 2 Environment classes \(A, B\): name one"):
        load_environment(str(tmp_path / "two_games.py"))
    assert load_environment(f"{tmp_path / 'two_games.py'}:B").name == "b"
    assert main(["serve", f"{GUESS_NUMBER}:Missing"]) == 2


def test_the_command_runs_as_a_module() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "ratchet_rollouts.environment_worker", "serve", "--help"],
        capture_output=True, text=True, timeout=60, cwd=REPO / "python",
    )
    assert shown.returncode == 0, shown.stderr
    assert "--max-concurrent" in shown.stdout and "--task-queue" in shown.stdout


def test_a_running_reset_and_step_heartbeat_until_they_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workflow sets a heartbeat timeout on remote resets and steps: a slow one must heartbeat all along, and stop
    when it ends (a killed worker is noticed by its silence)."""
    monkeypatch.setattr(environment_worker, "HEARTBEAT_INTERVAL_S", 0.05)

    class Slow(Environment):
        name = "slow"

        async def reset(self, task: EnvironmentTask) -> str:
            await asyncio.sleep(0.3)
            return "wait"

        async def step(self, action: Action) -> StepResult:
            await asyncio.sleep(0.3)
            return ok()

    beats: list[float] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(asyncio.get_running_loop().time())
    activities = EnvironmentActivities(Slow)
    start = reset_request("slow")

    async def both() -> tuple[int, int, int]:
        reset = await env.run(activities.reset, start)
        after_reset = len(beats)
        step = await env.run(activities.step, step_request(start, 0, "x", reset["state"]))
        assert step["verdict"] == "wrong"
        after_step = len(beats)
        await asyncio.sleep(0.2)  # no heartbeat once the step has answered
        return after_reset, after_step, len(beats)

    after_reset, after_step, later = run(both())
    assert after_reset >= 4 and after_step - after_reset >= 4
    assert later == after_step
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    assert max(gaps) < 0.3


def test_a_failing_step_stops_heartbeating() -> None:
    class Failing(Environment):
        name = "failing"

        async def step(self, action: Action) -> StepResult:
            raise EnvironmentFailure("no", "data")

    beats: list[object] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    start = reset_request("failing")

    async def step() -> None:
        with pytest.raises(ApplicationError):
            await env.run(EnvironmentActivities(Failing).step, step_request(start, 0, "x", {}))
        count = len(beats)
        await asyncio.sleep(environment_worker.HEARTBEAT_INTERVAL_S + 0.2)
        assert len(beats) == count and count >= 1
        assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    run(step())

"""The Python environment worker holds the same bounds as the workflow (src/environments/bounds.ts), and refuses what
goes over them as data, naming the size: observations over MAX_OBSERVATION_CHARS, a state over MAX_STATE_BYTES."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError

from ratchet_rollouts import Action, Environment, EnvironmentActivities, EnvironmentTask, StepResult, bounds

REPO = Path(__file__).resolve().parents[2]


def typescript_constant(path: str, name: str) -> int:
    """`export const NAME = <arithmetic of integers>;` in a TypeScript file, evaluated."""
    found = re.search(rf"export const {name} = ([0-9 *+]+);", (REPO / path).read_text())
    assert found, f"{name} not found in {path}"
    return int(eval(found.group(1), {"__builtins__": {}}))  # digits, spaces, * and + only


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("ENVIRONMENT_ATTEMPTS", "src/environments/bounds.ts"),
        ("MAX_OBSERVATION_CHARS", "src/environments/bounds.ts"),
        ("MAX_STATE_BYTES", "src/environments/bounds.ts"),
        ("MAX_VERDICT_CHARS", "src/environments/step-result.ts"),
    ],
)
def test_the_python_bounds_are_the_workflows(name: str, path: str) -> None:
    assert getattr(bounds, name) == typescript_constant(path, name)


def request(**overrides: Any) -> dict[str, Any]:
    reset = {"trajectoryId": "t/q/0", "qid": "q", "environment": "big", "problem": "p", "gold": ["1"], "args": None, "seed": 1}
    return {**reset, "turn": 0, "text": "hi", "finishReason": "stop", "state": {}, **overrides}


class Big(Environment):
    """Answers as large as its args say: observation characters, state characters, reset characters."""

    name = "big"

    async def reset(self, task: EnvironmentTask) -> str:
        return "x" * int(task.args.get("reset", 1))

    async def step(self, action: Action) -> StepResult:
        self.blob = "s" * int(self.task.args.get("state", 0))
        return StepResult([{"role": "tool", "content": "o" * int(self.task.args.get("observation", 1))}], 0.0, False, False, "ok")


def refusal(call: Any) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        asyncio.run(call)
    assert (raised.value.type, raised.value.non_retryable) == ("EnvironmentDataError", True)
    return raised.value


def test_observations_over_the_bound_are_data_naming_their_size() -> None:
    at_bound = asyncio.run(EnvironmentActivities(Big).step(request(args={"observation": bounds.MAX_OBSERVATION_CHARS})))
    assert len(at_bound["observations"][0]["content"]) == bounds.MAX_OBSERVATION_CHARS
    error = refusal(EnvironmentActivities(Big).step(request(args={"observation": 5 * 1024 * 1024})))
    assert f"observations hold {5 * 1024 * 1024} characters, over the {bounds.MAX_OBSERVATION_CHARS}" in error.message
    error = refusal(EnvironmentActivities(Big).reset(request(args={"reset": bounds.MAX_OBSERVATION_CHARS + 1})))
    assert f"messages hold {bounds.MAX_OBSERVATION_CHARS + 1} characters" in error.message


def test_a_state_over_the_bound_is_data_naming_its_size() -> None:
    # {"blob":"..."}: 11 bytes around the string.
    fits = bounds.MAX_STATE_BYTES - 11
    assert len(asyncio.run(EnvironmentActivities(Big).step(request(args={"state": fits})))["state"]["blob"]) == fits
    error = refusal(EnvironmentActivities(Big).step(request(args={"state": fits + 1})))
    assert f"is {bounds.MAX_STATE_BYTES + 1} bytes of JSON, over the {bounds.MAX_STATE_BYTES}" in error.message

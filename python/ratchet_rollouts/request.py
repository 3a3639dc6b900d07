"""The `trajectory` workflow's input, built as the TypeScript client builds it. trajectory-request.schema.json
(generated from the TypeScript schema, shipped in this package) is its contract: every request is checked against
it here, before anything starts, as the TypeScript client checks with the schema itself."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from .errors import InvalidTrajectoryRequest
from .problems import Problem, own_environment
from .run_config import RunConfig

#: The CPU task queue the trajectory workflow runs on (src/task-queues.ts).
TRAJECTORY_TASK_QUEUE = "ratchet-cpu"
TRAJECTORY_WORKFLOW = "trajectory"


def trajectory_request(
    run: RunConfig,
    problem: Problem,
    group_id: str,
    samples: int,
    sample: int,
    rollout: Mapping[str, Any] | None = None,
    timeouts: Mapping[str, Any] | None = None,
    environment: str | None = None,
    environment_args: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One sample of a group: its id is `<group id>/<sample>`, also the workflow id. `environment` and
    `environment_args`, when given, replace the problem's own (its row's `environment` / `environment_args`)."""
    if not 0 <= sample < samples:
        raise InvalidTrajectoryRequest(f"sample {sample} is outside a group of {samples}")
    environment = environment if environment is not None else problem.environment
    args = environment_args if environment_args is not None else problem.environment_args
    if not problem.code and not problem.gold and not own_environment(environment):
        raise InvalidTrajectoryRequest(f"problem {problem.qid} has no gold answer and no code tests")
    request: dict[str, Any] = {"trajectoryId": f"{group_id}/{sample}", "qid": problem.qid}
    if problem.task_id is not None:
        request["taskId"] = problem.task_id
    request["problem"] = problem.problem
    request["gold"] = list(problem.gold)
    if problem.code:
        request["code"] = problem.code
    if environment is not None:
        request["environment"] = environment
    if args is not None:
        request["environmentArgs"] = dict(args)
    if rollout:
        request["options"] = dict(rollout)
    request["group"] = {"run": run.to_request(), "groupId": group_id, "size": samples, "sample": sample}
    if timeouts:
        request["timeouts"] = dict(timeouts)
    check_request(request)
    return request


def check_request(request: Mapping[str, Any]) -> None:
    """Raises InvalidTrajectoryRequest listing each problem as `path: message`, as the workflow would list them:
    a bad option fails at submission, not as one failed trajectory per sample after the group was started."""
    problems = sorted(_validator().iter_errors(request), key=lambda error: [str(part) for part in error.absolute_path])
    if problems:
        where = request.get("trajectoryId", "a trajectory request")
        raise InvalidTrajectoryRequest(f"{where}: " + "; ".join(f"{_path(error.absolute_path)}: {error.message}" for error in problems))


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(resources.files(__package__).joinpath("trajectory-request.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def _path(parts: Any) -> str:
    return ".".join(str(part) for part in parts) or "(request)"

"""The `trajectory` workflow's input, built as the TypeScript client builds it. docs/trajectory-request.schema.json
(generated from the TypeScript schema) is its contract; the tests on both sides validate against it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InvalidTrajectoryRequest
from .problems import Problem
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
) -> dict[str, Any]:
    """One sample of a group: its id is `<group id>/<sample>`, also the workflow id."""
    if not 0 <= sample < samples:
        raise InvalidTrajectoryRequest(f"sample {sample} is outside a group of {samples}")
    if not problem.code and not problem.gold:
        raise InvalidTrajectoryRequest(f"problem {problem.qid} has no gold answer and no code tests")
    request: dict[str, Any] = {"trajectoryId": f"{group_id}/{sample}", "qid": problem.qid}
    if problem.task_id is not None:
        request["taskId"] = problem.task_id
    request["problem"] = problem.problem
    request["gold"] = list(problem.gold)
    if problem.code:
        request["code"] = problem.code
    if rollout:
        request["options"] = dict(rollout)
    request["group"] = {"run": run.to_request(), "groupId": group_id, "size": samples, "sample": sample}
    if timeouts:
        request["timeouts"] = dict(timeouts)
    return request

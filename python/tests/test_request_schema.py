"""The requests the package builds validate against trajectory-request.schema.json, generated from the
TypeScript schema; they are also written out (RATCHET_PY_REQUESTS) for the vitest file to check with zod."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from ratchet_rollouts import InvalidTrajectoryRequest, Problem, RunConfig, group_id, load_problems, trajectory_request

from conftest import REPO, SAMPLE

SCHEMA = json.loads((REPO / "python" / "ratchet_rollouts" / "trajectory-request.schema.json").read_text())


def built_requests() -> list[dict[str, object]]:
    run = RunConfig(run_id="schema-run", max_head_offpolicyness=2, batch_size=4, max_concurrent=8)
    math = load_problems(SAMPLE)[0]
    code = load_problems(REPO / "data" / "code-sample.jsonl")[0]
    tagged = Problem(qid="gsm8k-7", problem="What is 1 + 1?", gold=["#### 2"], source="gsm8k", task_id=7)
    return [
        trajectory_request(run, math, group_id(run.run_id, math.qid), 4, 0),
        trajectory_request(run, math, group_id(run.run_id, math.qid, "epoch-2"), 4, 3, {"turns": 3, "earlyStop": True, "discount": 0.9}, {"generateHeartbeatSeconds": 30}),
        trajectory_request(run, code, group_id(run.run_id, code.qid), 2, 1, {"turns": 2}),
        trajectory_request(run, tagged, group_id(run.run_id, tagged.qid), 1, 0, {"layout": "concat"}),
    ]


def test_built_requests_validate_against_the_generated_json_schema() -> None:
    validator = Draft202012Validator(SCHEMA)
    requests = built_requests()
    for request in requests:
        errors = sorted(validator.iter_errors(request), key=str)
        assert not errors, [e.message for e in errors]
    out = os.environ.get("RATCHET_PY_REQUESTS")
    if out:
        Path(out).write_text(json.dumps(requests))


def test_the_schema_refuses_what_the_workflow_would() -> None:
    validator = Draft202012Validator(SCHEMA)
    request = built_requests()[1]
    assert not validator.is_valid({**request, "options": {"turns": 0}})
    assert not validator.is_valid({**request, "extra": True})
    # Sampling: top_k 0 is refused (-1 is off), as are top_p 0 and a repetition penalty above 2.
    for bad in ({"topK": 0}, {"topK": 2.5}, {"topP": 0}, {"minP": 1.5}, {"repetitionPenalty": 3}):
        assert not validator.is_valid({**request, "options": bad}), bad
    assert validator.is_valid({**request, "options": {"temperature": 0.7, "topP": 0.95, "topK": 20, "minP": 0.05, "repetitionPenalty": 1.1}})
    with pytest.raises(Exception, match="outside a group"):
        trajectory_request(RunConfig("r", 1, 1, 1), load_problems(SAMPLE)[0], "r/x", 2, 2)


def test_a_bad_option_fails_when_the_request_is_built_naming_each_problem() -> None:
    run = RunConfig(run_id="schema-run", max_head_offpolicyness=2, batch_size=4, max_concurrent=8)
    math = load_problems(SAMPLE)[0]
    gid = group_id(run.run_id, math.qid)
    with pytest.raises(InvalidTrajectoryRequest) as raised:
        trajectory_request(run, math, gid, 4, 0, {"turns": 0, "temperature": "hot"}, {"generateHeartbeatSeconds": "30"})
    message = str(raised.value)
    assert message.startswith(f"{gid}/0: ")
    for field in ("options.turns", "options.temperature", "timeouts.generateHeartbeatSeconds"):
        assert field in message, message
    # A misspelt option is not ignored: the workflow would reject it, so the client does too.
    with pytest.raises(InvalidTrajectoryRequest, match="turn"):
        trajectory_request(run, math, gid, 4, 0, {"turn": 3})

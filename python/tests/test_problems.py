"""load_problems agrees with the TypeScript loader: the vitest file writes what src/datasets gives for a shared
corpus (RATCHET_TS_PROBLEMS), and each file must load to the same qids, problems and skipped lines here."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from ratchet_rollouts import load_dataset


def typescript_loads() -> list[dict[str, Any]]:
    folder = os.environ.get("RATCHET_TS_PROBLEMS")
    if not folder:
        pytest.fail("RATCHET_TS_PROBLEMS unset: run through test/python/python-package.test.ts")
    return [json.loads(path.read_text()) for path in sorted(Path(folder).glob("*.json"))]


def as_typescript(problem: Any) -> dict[str, Any]:
    fields = asdict(problem)
    out = {"qid": fields["qid"], "problem": fields["problem"], "gold": fields["gold"], "source": fields["source"]}
    if fields["task_id"] is not None:
        out["taskId"] = fields["task_id"]
    if fields["code"] is not None:
        out["code"] = fields["code"]
    if fields["environment"] is not None:
        out["environment"] = fields["environment"]
    if fields["environment_args"] is not None:
        out["environmentArgs"] = fields["environment_args"]
    return out


def test_loads_the_shared_corpus_as_the_typescript_loader_does(env: dict[str, str]) -> None:
    loads = typescript_loads()
    assert len(loads) >= 4
    for expected in loads:
        loaded = load_dataset(expected["file"])
        assert [p.qid for p in loaded.problems] == [p["qid"] for p in expected["problems"]], expected["file"]
        assert [as_typescript(p) for p in loaded.problems] == expected["problems"], expected["file"]
        assert [e.line for e in loaded.errors] == expected["errorLines"], (expected["file"], [str(e) for e in loaded.errors])


def test_the_edge_case_corpus_skips_rows_with_reasons(env: dict[str, str]) -> None:
    loaded = load_dataset(Path(__file__).parent / "corpus" / "edge-cases.jsonl")
    assert loaded.problems and loaded.errors
    assert any("duplicate qid" in e.message for e in loaded.errors)
    assert any("####" in e.message for e in loaded.errors)

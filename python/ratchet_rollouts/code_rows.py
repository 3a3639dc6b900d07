"""Code rows (AReaL `task: "code"`, APPS / TACO, LiveCodeBench) mapped onto AReaL's `input_output` tests, as
src/datasets/code-shapes.ts and src/code/input-output.ts do."""

from __future__ import annotations

import json
import re
from typing import Any

_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


class RowProblem(ValueError):
    """Why a row is unusable; the loader records it against the row's line."""


def parse_tests(raw: Any, field: str = "input_output") -> dict[str, Any]:
    value = raw
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as error:
            raise RowProblem(f'"{field}" is not valid JSON: {error}') from None
    if not isinstance(value, dict):
        raise RowProblem(f'"{field}" must be a JSON object with "inputs" and "outputs"')
    lists = {}
    for name in ("inputs", "outputs"):
        items = value.get(name)
        if not isinstance(items, list):
            raise RowProblem(f'"{field}.{name}" must be a list')
        if any(not isinstance(item, str) for item in items):
            raise RowProblem(f'"{field}.{name}" items must be strings')
        lists[name] = items
    if len(lists["inputs"]) != len(lists["outputs"]):
        raise RowProblem(f'"{field}" has {len(lists["inputs"])} inputs but {len(lists["outputs"])} outputs')
    if not lists["inputs"]:
        raise RowProblem(f'"{field}" has no test cases')
    fn_name = value.get("fn_name")
    if fn_name is not None and not isinstance(fn_name, str):
        raise RowProblem(f'"{field}.fn_name" must be a string')
    if fn_name and not _IDENTIFIER.match(fn_name):
        raise RowProblem(f'"{field}.fn_name" {fn_name!r} is not a Python identifier')
    return {"inputs": lists["inputs"], "outputs": lists["outputs"], "fnName": fn_name or ""}


def _json_list(raw: Any, field: str) -> list[Any]:
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        return []
    try:
        value = json.loads(raw)
        if isinstance(value, list):
            return value
    except (TypeError, ValueError):
        pass
    raise RowProblem(f'"{field}" must be a JSON list (as a string)')


def _plain_json_list(raw: Any) -> list[Any]:
    try:
        value = json.loads(raw) if raw else []
        return value if isinstance(value, list) else []
    except (TypeError, ValueError):
        return []


def with_starter(question: str, starter: Any) -> str:
    if isinstance(starter, str) and starter.strip():
        return f"{question.strip()}\n\nStarter code:\n```python\n{starter.rstrip()}\n```"
    return question


def _js_json(value: Any) -> str:
    """JSON.stringify's spelling: no spaces after separators."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def apps_tests(raw: str) -> Any:
    """APPS keeps call arguments as lists and wraps each return value in a list; AReaL wants JSON lines."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(value, dict):
        return value
    inputs, outputs, fn_name = value.get("inputs"), value.get("outputs"), value.get("fn_name")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        return value
    if isinstance(fn_name, str) and fn_name:
        return {
            "fn_name": fn_name,
            "inputs": ["\n".join(_js_json(arg) for arg in args) if isinstance(args, list) else args for args in inputs],
            "outputs": [_js_json(out[0] if isinstance(out, list) and len(out) == 1 else out) for out in outputs],
        }

    def joined(item: Any) -> Any:
        return "\n".join(item) if isinstance(item, list) and all(isinstance(x, str) for x in item) else item

    return {"inputs": [joined(i) for i in inputs], "outputs": [joined(o) for o in outputs]}


def livecodebench_tests(row: dict[str, Any]) -> dict[str, Any]:
    # Private cases usually ship zlib-compressed and pickled; only plain JSON ones are read.
    cases = _json_list(row.get("public_test_cases"), "public_test_cases") + _plain_json_list(row.get("private_test_cases"))
    functional = any(isinstance(c, dict) and c.get("testtype") == "functional" for c in cases)
    fn_name = ""
    if functional:
        try:
            name = json.loads(row.get("metadata") or "{}").get("func_name")
            fn_name = name if isinstance(name, str) else ""
        except (ValueError, AttributeError):
            fn_name = ""
        if not fn_name:
            raise RowProblem('"metadata.func_name" is missing')
    inputs = [c.get("input") if isinstance(c, dict) else None for c in cases]
    outputs = [c.get("output") if isinstance(c, dict) else None for c in cases]
    return parse_tests({"inputs": inputs, "outputs": outputs, "fn_name": fn_name}, "public_test_cases")


def json_list_of_strings(raw: Any, field: str) -> list[str]:
    return [s for s in _json_list(raw, field) if isinstance(s, str)]

"""Dataset rows as problems: the GSM8K, MATH and AReaL shapes (math and code) and APPS / LiveCodeBench, with
the qids the TypeScript loader (src/datasets/) gives them, so a run submitted from either language has the
same groups. Malformed rows are skipped and reported, never fatal."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .code_rows import RowProblem, apps_tests, json_list_of_strings, livecodebench_tests, parse_tests, with_starter
from .errors import DatasetNotFound

Source = Literal["gsm8k", "math", "areal", "apps", "livecodebench"]
MAX_FIELD_CHARS = 1_000_000
MAX_QID_BYTES = 400
_CONTROL = re.compile("[\u0000-\u001f\u007f-\u009f]")
# As the request schema has it: an environment's name is part of a task queue's name.
_ENVIRONMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Environments that judge an answer against the gold: a row for any other may leave its answer out.
JUDGED_BY_GOLD = ("math", "math-python-tool", "code")
_LINE_BREAK = re.compile(rb"\r\n|\n|\r")
# What the request may hold as JSON (Temporal's 2 MiB payload limit, less framing and what submission adds).
_REQUEST_BYTES = 2 * 1024 * 1024 - 1024 - 4096


@dataclass
class Problem:
    """One dataset row. `qid` is `unique_id` / `query_id` when present, else `<file stem>-<line>` (1-based)."""

    qid: str
    problem: str
    #: Gold answers as the dataset has them; a code task's reference solutions (its tests judge answers).
    gold: list[str]
    source: Source = "math"
    task_id: int | None = None
    #: A code task's tests and limits (`{"tests": {"inputs", "outputs", "fnName"}, "timeoutS"?, "memoryMb"?}`).
    code: dict[str, Any] | None = None
    #: The row's `environment`: `math`, `code`, `math-python-tool` or one served by `ratchet-env serve`; None: `code`
    #: for a code task, `math` otherwise.
    environment: str | None = None
    #: The row's `environment_args`: what the environment needs beyond the problem (a game's range, a tool list).
    environment_args: dict[str, Any] | None = None


@dataclass
class RowError:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class LoadedDataset:
    problems: list[Problem] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)


def _text(row: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = row.get(name)
    if value is None and name not in row and not required:
        return None
    if name not in row:
        raise RowProblem(f'"{name}" is missing')
    if not isinstance(value, str):
        raise RowProblem(f'"{name}" must be a string')
    if len(value) > MAX_FIELD_CHARS:
        raise RowProblem(f'"{name}" is over the 1 MB field limit ({len(value)} characters)')
    if value.strip() == "":
        raise RowProblem(f'"{name}" is empty')
    return value


def _task_id(row: dict[str, Any]) -> int | None:
    value = row.get("task_id")
    if "task_id" not in row:
        return None
    # JSON has one number type: 3.0 is the integer 3, as JavaScript reads it; true is not a number.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
        raise RowProblem('"task_id" must be an integer')
    return int(value)


def _positive(row: dict[str, Any], name: str) -> float | None:
    value = row.get(name)
    if name not in row:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise RowProblem(f'"{name}" must be a positive number')
    return value


def own_environment(environment: object) -> bool:
    """The row names an environment that needs no gold answer (one served on its own task queue, a game)."""
    return isinstance(environment, str) and environment not in JUDGED_BY_GOLD


def _environment(row: dict[str, Any], problem: Problem) -> Problem:
    """The problem with the row's `environment` and `environment_args` (any row shape may carry them)."""
    if "environment" in row:
        name = row["environment"]
        if not isinstance(name, str):
            raise RowProblem('"environment" must be a string')
        if not _ENVIRONMENT_NAME.fullmatch(name):
            raise RowProblem('"environment" must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit')
        problem.environment = name
    if "environment_args" in row:
        args = row["environment_args"]
        if not isinstance(args, dict):
            raise RowProblem('"environment_args" must be an object')
        problem.environment_args = args
    return problem


def _shape(row: dict[str, Any]) -> str | None:
    if row.get("task") == "code":
        return "areal_code"
    if "question_content" in row or "public_test_cases" in row:
        return "livecodebench"
    if "question" in row and "input_output" in row:
        return "apps"
    if "query_id" in row or "solutions" in row or "prompt" in row:
        return "areal"
    if "question" in row:
        return "gsm8k"
    if "problem" in row:
        return "math"
    return None


def parse_row(row: dict[str, Any]) -> tuple[str | None, Problem]:
    """A row's own id (or None: the loader gives `<stem>-<line>`) and its problem with a placeholder qid."""
    own_id, problem = _parse_shape(row)
    return own_id, _environment(row, problem)


def _parse_shape(row: dict[str, Any]) -> tuple[str | None, Problem]:
    shape = _shape(row)
    if shape is None:
        raise RowProblem(f"unknown row shape (keys: {', '.join(row) or 'none'})")
    task_id = _task_id(row)
    if shape == "gsm8k":
        question, answer = _text(row, "question"), _text(row, "answer")
        assert question is not None and answer is not None
        if not re.search(r"####\s*\S", answer):
            raise RowProblem('"answer" has no "#### <final answer>" line')
        return None, Problem("", question, [answer], "gsm8k", task_id)
    if shape == "math":
        # A row for an environment of its own (a game served by its worker) may have no answer: nothing judges one.
        optional = "answer" not in row and own_environment(row.get("environment"))
        problem, answer, unique_id = _text(row, "problem"), _text(row, "answer", required=not optional), _text(row, "unique_id", required=False)
        assert problem is not None and (answer is not None or optional)
        return unique_id, Problem("", problem, [] if answer is None else [answer], "math", task_id)
    if shape == "areal":
        query_id, prompt = _text(row, "query_id"), _text(row, "prompt")
        solutions = row.get("solutions")
        if not isinstance(solutions, list) or not solutions:
            raise RowProblem('"solutions" must be a non-empty array of strings')
        gold = [_text({"s": s}, "s") or "" for s in solutions]
        task = row.get("task")
        if task is not None and task != "math":
            raise RowProblem(f'unsupported task {json.dumps(task)} (only "math" and "code" load)')
        assert prompt is not None
        return query_id, Problem("", prompt, gold, "areal", task_id)
    if shape == "areal_code":
        query_id, prompt = _text(row, "query_id"), _text(row, "prompt")
        if "input_output" not in row:
            raise RowProblem('"input_output" is missing')
        code: dict[str, Any] = {"tests": parse_tests(row["input_output"])}
        timeout, memory = _positive(row, "timeout"), _positive(row, "memory")
        if timeout is not None:
            code["timeoutS"] = timeout
        if memory is not None:
            code["memoryMb"] = memory
        solutions = row.get("solutions", [])
        if not isinstance(solutions, list) or any(not isinstance(s, str) for s in solutions):
            raise RowProblem('"solutions" must be an array of strings')
        assert prompt is not None
        return query_id, Problem("", prompt, list(solutions), "areal", task_id, code)
    if shape == "apps":
        question = _text(row, "question")
        if not isinstance(row.get("input_output"), str):
            raise RowProblem('"input_output" must be a JSON string')
        gold = json_list_of_strings(row.get("solutions"), "solutions")
        code = {"tests": parse_tests(apps_tests(row["input_output"]))}
        problem_id = row.get("problem_id")
        assert question is not None
        return (None if problem_id is None else f"apps-{problem_id}"), Problem("", with_starter(question, row.get("starter_code")), gold, "apps", task_id, code)
    content = _text(row, "question_content")
    assert content is not None
    code = {"tests": livecodebench_tests(row)}
    return f"lcb-{row.get('question_id')}", Problem("", with_starter(content, row.get("starter_code")), [], "livecodebench", None, code)


def request_problem(problem: Problem) -> str | None:
    """Why a request made from this problem would be refused (src/datasets/row-request.ts), or None."""
    qid_bytes = len(problem.qid.encode())
    if qid_bytes > MAX_QID_BYTES:
        return f'"qid" must be at most {MAX_QID_BYTES} UTF-8 bytes, got {qid_bytes}'
    if _CONTROL.search(problem.qid):
        return '"qid" must not contain control characters'
    texts = [problem.problem, *problem.gold]
    if problem.code:
        texts += problem.code["tests"]["inputs"] + problem.code["tests"]["outputs"]
    if any("\u0000" in t for t in texts):
        return "must not contain NUL (U+0000), which Postgres cannot store"
    if not problem.code and not problem.gold and not own_environment(problem.environment):
        return '"gold" must hold at least one gold answer'
    if problem.environment == "code" and not problem.code:
        return '"code" is required by the `code` environment (the tests its answers run against)'
    size = len(json.dumps({
        "qid": problem.qid, "problem": problem.problem, "gold": problem.gold, "code": problem.code,
        "environment": problem.environment, "environmentArgs": problem.environment_args,
    }).encode())
    if size > _REQUEST_BYTES:
        return f"too large: its trajectory request would be about {size} bytes as JSON"
    return None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def load_dataset(path: str | Path, limit: int | None = None) -> LoadedDataset:
    """Loads a JSONL dataset. Lines end at LF, CRLF or a lone CR, as the TypeScript loader splits them."""
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise DatasetNotFound(f"Dataset not found or unreadable: {file} ({error.strerror})") from error
    stem = Path(file).name
    stem = stem[: stem.rindex(".")] if stem.rfind(".") > 0 else stem
    loaded, seen = LoadedDataset(), dict[str, int]()
    for number, raw in enumerate(_LINE_BREAK.split(data), start=1):
        if limit is not None and len(loaded.problems) >= limit:
            break
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            loaded.errors.append(RowError(file, number, "not valid UTF-8"))
            continue
        if number == 1:
            text = text.removeprefix("\ufeff")
        if text.strip() == "":
            continue
        try:
            row = json.loads(text, parse_constant=_reject_constant)
            if not isinstance(row, dict):
                raise RowProblem("row must be a JSON object")
            own_id, problem = parse_row(row)
        except (ValueError, RowProblem) as error:
            loaded.errors.append(RowError(file, number, str(error)))
            continue
        problem.qid = own_id if own_id is not None else f"{stem}-{number}"
        if problem.qid in seen:
            loaded.errors.append(RowError(file, number, f'duplicate qid "{problem.qid}" (first on line {seen[problem.qid]})'))
            continue
        unusable = request_problem(problem)
        if unusable:
            loaded.errors.append(RowError(file, number, unusable))
            continue
        seen[problem.qid] = number
        loaded.problems.append(problem)
    return loaded


def load_problems(path: str | Path, limit: int | None = None) -> list[Problem]:
    """The valid problems of a JSONL file (see `load_dataset` for the skipped rows and why)."""
    return load_dataset(path, limit).problems

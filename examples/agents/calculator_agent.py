"""A math agent with two tools, written with the OpenAI Python SDK, run by Ratchet as an environment (agent program).

Ratchet's worker runs this program once per trajectory (see README.md beside it). `OpenAI()` reads OPENAI_BASE_URL and
OPENAI_API_KEY, so every chat completion below is a durable GPU turn of the trajectory's policy. The program:

- reads the task (RATCHET_TASK) and asks the policy to solve its problem, offering `calculator` and `unit_convert`;
- runs the tool calls the policy writes and sends the results back, one call at a time, at most MAX_CALLS calls;
- answers a turn Ratchet reports as malformed (`malformed_tool_calls`) with a user message of its observations;
- writes `{"answer": <the last reply's content>}` to RATCHET_RESULT and exits 0; Ratchet grades the answer.

It is deterministic: the same task and the same replies make the same calls, so a re-run (after a crash or a kill) is
answered from the store. Every assistant message goes back exactly as received, `reasoning_content` and `tool_calls`
included, so each call extends the trajectory's token sequence. CALCULATOR_AGENT_FORGET_REASONING=1 drops
`reasoning_content` instead, as many clients do: Ratchet then records a fork (`dropped-reasoning`).

Needs the `openai` package (`pip install 'ratchet-rollouts[agents]'`, or `.ratchet/python-env` from
`ratchet setup --python-example`).
"""

from __future__ import annotations

import ast
import json
import math
import operator
import os
import sys
from pathlib import Path
from typing import Any, Callable, Union, cast

from openai import OpenAI
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessage, ChatCompletionMessageParam

MAX_CALLS = 6
"""Model calls per episode: the policy answers within a few tool rounds; a runaway loop stops here."""

SYSTEM_PROMPT = (
    "You are a careful math assistant. Use the calculator for arithmetic and unit_convert for unit conversions. "
    "When you are done, give the final answer in \\boxed{}."
)

MAX_EXPRESSION_CHARS = 500
MAX_INT_BITS = 4096
MAX_EXPONENT = 1000

Number = Union[int, float]

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


class CalculatorError(Exception):
    """An expression the calculator will not evaluate: its message is what the model reads."""


def _checked(value: Any) -> Number:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculatorError("the result is not a real number")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculatorError("the result is too large")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError("the result is not finite")
    return value


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _checked(node.value)
    if isinstance(node, ast.Name):
        if node.id not in CONSTANTS:
            raise CalculatorError(f"unknown name {node.id!r}: the calculator knows numbers, pi and e")
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return _checked(UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > 2**64):
            raise CalculatorError("the power is too large")
        return _checked(BINARY[type(node.op)](left, right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords:
        return _checked(FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args)))
    raise CalculatorError(f"unsupported syntax: {type(node).__name__}")


def calculator(arguments: dict[str, Any]) -> str:
    """Evaluates arithmetic (+ - * / // % **, parentheses, sqrt abs round min max floor ceil, pi, e) with `ast`, no eval."""
    expression = arguments.get("expression")
    if not isinstance(expression, str):
        return "error: `expression` must be a string"
    if len(expression) > MAX_EXPRESSION_CHARS:
        return f"error: the expression is longer than {MAX_EXPRESSION_CHARS} characters"
    try:
        value = _evaluate(ast.parse(expression.strip(), mode="eval"))
    except CalculatorError as error:
        return f"error: {error}"
    except SyntaxError:
        return f"error: {expression!r} is not an arithmetic expression"
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as error:
        return f"error: {type(error).__name__}: {error}"
    return repr(value)


# Each unit: its dimension and its size in the dimension's base unit (temperatures are converted apart).
UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "cm": ("length", 0.01),
    "mm": ("length", 0.001),
    "mi": ("length", 1609.344),
    "ft": ("length", 0.3048),
    "in": ("length", 0.0254),
    "kg": ("mass", 1.0),
    "g": ("mass", 0.001),
    "lb": ("mass", 0.45359237),
    "oz": ("mass", 0.028349523125),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "day": ("time", 86400.0),
    "C": ("temperature", 1.0),
    "F": ("temperature", 1.0),
    "K": ("temperature", 1.0),
}


def _to_kelvin(value: float, unit: str) -> float:
    return value + 273.15 if unit == "C" else (value - 32.0) * 5.0 / 9.0 + 273.15 if unit == "F" else value


def _from_kelvin(value: float, unit: str) -> float:
    return value - 273.15 if unit == "C" else (value - 273.15) * 9.0 / 5.0 + 32.0 if unit == "F" else value


def unit_convert(arguments: dict[str, Any]) -> str:
    """Converts a value between units of the same dimension (length, mass, time, temperature)."""
    value, source, target = arguments.get("value"), arguments.get("from_unit"), arguments.get("to_unit")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "error: `value` must be a finite number"
    if not isinstance(source, str) or source not in UNITS:
        return f"error: unknown from_unit {source!r}; known: {', '.join(UNITS)}"
    if not isinstance(target, str) or target not in UNITS:
        return f"error: unknown to_unit {target!r}; known: {', '.join(UNITS)}"
    (dimension, size), (target_dimension, target_size) = UNITS[source], UNITS[target]
    if dimension != target_dimension:
        return f"error: cannot convert {dimension} ({source}) to {target_dimension} ({target})"
    try:
        converted = _from_kelvin(_to_kelvin(float(value), source), target) if dimension == "temperature" else float(value) * size / target_size
    except OverflowError:
        return "error: the value is too large"
    if not math.isfinite(converted):
        return "error: the value is too large"
    return f"{value} {source} = {converted:.10g} {target}"


TOOLS: dict[str, Callable[[dict[str, Any]], str]] = {"calculator": calculator, "unit_convert": unit_convert}

TOOL_SCHEMAS: list[ChatCompletionFunctionToolParam] = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression: + - * / // % **, parentheses, sqrt, abs, round, min, max, floor, ceil, pi, e.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string", "description": "The expression, e.g. (3 + 4) * 2 / 7"}},
                "required": ["expression"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "unit_convert",
            "description": "Convert a value between units of length, mass, time or temperature.",
            "parameters": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "from_unit": {"type": "string", "enum": list(UNITS)},
                    "to_unit": {"type": "string", "enum": list(UNITS)},
                },
                "required": ["value", "from_unit", "to_unit"],
            },
        },
    },
]


def run_tool(name: str, arguments_json: str) -> str:
    """A tool's result for the model: always a string, an error message on bad input (a tool never raises)."""
    tool = TOOLS.get(name)
    if tool is None:
        return f"error: unknown tool {name!r}; the tools are {', '.join(TOOLS)}"
    try:
        arguments = json.loads(arguments_json)
    except ValueError:
        return "error: the arguments are not valid JSON"
    if not isinstance(arguments, dict):
        return "error: the arguments must be a JSON object"
    try:
        return tool(arguments)
    except Exception as error:  # a tool's failure is an observation, never the episode's end
        return f"error: {type(error).__name__}: {error}"


def sent_back(message: ChatCompletionMessage, forget_reasoning: bool) -> ChatCompletionMessageParam:
    """The reply as the next request carries it: unchanged (Ratchet's extras kept), so the call extends the sequence."""
    dumped = message.model_dump(exclude_none=True)  # extras (reasoning_content, malformed_tool_calls) included
    if forget_reasoning:
        dumped.pop("reasoning_content", None)
        dumped.pop("reasoning", None)
    return cast(ChatCompletionMessageParam, dumped)


def malformed_observations(message: ChatCompletionMessage) -> list[str]:
    """The observations of Ratchet's `malformed_tool_calls` extra, in order; empty when the turn had none."""
    malformed = (message.model_extra or {}).get("malformed_tool_calls") or []
    return [str(entry.get("observation", "")) for entry in malformed if isinstance(entry, dict)]


def solve(client: OpenAI, model: str, problem: str, forget_reasoning: bool) -> str:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": problem}]
    answer = ""
    for _ in range(MAX_CALLS):
        completion = client.chat.completions.create(model=model, messages=messages, tools=TOOL_SCHEMAS)
        message = completion.choices[0].message
        messages.append(sent_back(message, forget_reasoning))
        answer = message.content or ""
        observations = malformed_observations(message)
        if observations:
            messages.append({"role": "user", "content": "\n".join(observations)})
            continue
        calls = [call for call in message.tool_calls or [] if call.type == "function"]
        if not calls:
            return answer
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call.function.name, call.function.arguments)})
    return answer


def main() -> int:
    task = json.loads(Path(os.environ["RATCHET_TASK"]).read_text(encoding="utf-8"))
    # No clock in the answer: a generous timeout, as a turn may wait in the GPU's queue; the worker bounds the run.
    client = OpenAI(timeout=3600.0)
    forget_reasoning = os.environ.get("CALCULATOR_AGENT_FORGET_REASONING") == "1"
    answer = solve(client, os.environ.get("RATCHET_MODEL", "policy"), str(task["problem"]), forget_reasoning)
    Path(os.environ["RATCHET_RESULT"]).write_text(json.dumps({"answer": answer}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

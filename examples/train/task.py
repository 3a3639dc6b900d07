"""The task: "What is n + 1?" for n = 0..8, answered with one digit (9 problems).

Why this one: a 2-layer model with hidden size 128 learns it from random weights in minutes on two CPU cores, with
one question token to read and one answer token to produce, so a rollout costs a couple of generated tokens and a
training step a fraction of a second; and Ratchet's own verifier judges it (an output that is only an answer counts
as stated, like `\\boxed{7}`). The prompt is Ratchet's, unchanged: the problem, then the usual "put your final answer
within \\boxed{}" instruction, in Qwen3's chat template. Sums of two digits were tried first: the same budget of
supervised steps barely moved them (12.8% right after 60 steps, against 56% here), since the model must find two
operands in the prompt instead of one."""

from __future__ import annotations

import json
from pathlib import Path


def successor_problems() -> list[dict[str, str]]:
    """MATH-shaped rows (`unique_id`, `problem`, `answer`): a dataset format Ratchet reads."""
    return [{"unique_id": f"succ/{n}", "problem": f"What is {n} + 1?", "answer": str(n + 1)} for n in range(9)]


def write_dataset(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in successor_problems()), encoding="utf-8")
    return path

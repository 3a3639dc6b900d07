"""What a trainer reports after each optimiser step (docs/training-steps.md), checked before it reaches Postgres:
JSON has no NaN or Infinity, so a non-finite metric would otherwise fail with a parser's message, not ours."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

from .errors import InvalidTrainingStep

#: The metric names the run page charts and `ratchet runs status` reads (src/training/training-step.ts); a trainer
#: may report any other number beside them.
TRAINING_METRICS = (
    "loss",
    "mean_reward",
    "parity_mean_abs",
    "parity_p99_abs",
    "parity_max_abs",
    "ratio_outside",
    "version_lag_mean",
    "version_lag_max",
    "eta",
    "tokens",
    "trajectories",
    "step_seconds",
)


def checked_metrics(run_id: str, step: int, policy_version: int, metrics: Mapping[str, float]) -> dict[str, float]:
    """The metrics as plain Python numbers (numpy and torch scalars included), or InvalidTrainingStep saying which is wrong."""
    where = f"training step {step!r} of run {run_id!r}"
    for field, number in (("step", step), ("policy version", policy_version)):
        if isinstance(number, bool) or not isinstance(number, numbers.Integral) or number < 0:
            raise InvalidTrainingStep(f"{where}: the {field} must be a non-negative integer, got {number!r}")
    checked: dict[str, float] = {}
    for name, value in metrics.items():
        if not isinstance(name, str):
            raise InvalidTrainingStep(f"{where}: metric names are strings, got {name!r}")
        finite = _finite(value)
        if finite is None:
            raise InvalidTrainingStep(f"{where}: metric {name} is {value!r}, not a finite number")
        checked[name] = finite
    return checked


def _finite(value: object) -> float | None:
    """A plain int or float for anything `float()` takes (a torch 0-d tensor too), but not text or a bool."""
    if isinstance(value, (bool, str, bytes)):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None

"""The numbers of a parity check, pure numpy: how far recomputed logprobs are from stored ones (`ParityStats`), and
a whole check's report, overall, per policy version and per sampling (`ParityReport`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .parity_rows import SAMPLING_COLUMNS, Sampling

#: The token-level probability ratio band trainers watch (a PPO-style clip of 0.2 either way, as 1/1.25 = 0.8).
RATIO_BAND = (0.8, 1.25)


@dataclass(frozen=True)
class ParityStats:
    """How far recomputed logprobs are from stored ones over a set of generated tokens (natural log)."""

    tokens: int
    #: |recomputed - stored|: mean, 99th percentile, max.
    mean_abs: float
    p99_abs: float
    max_abs: float
    #: The probability ratio exp(recomputed - stored): a trainer's importance weight at zero policy change.
    ratio_mean: float
    ratio_min: float
    ratio_max: float
    #: Fraction of tokens whose ratio lies outside [0.8, 1.25].
    ratio_outside: float
    #: k3 estimate of KL(behaviour || recomputed): mean of exp(r) - 1 - r, r = recomputed - stored.
    kl_k3: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def parity_stats(stored: np.ndarray, recomputed: np.ndarray) -> ParityStats:
    """Parity of 1-D arrays of the same generated tokens' logprobs: stored (behaviour) and recomputed."""
    stored = np.asarray(stored, dtype=np.float64)
    recomputed = np.asarray(recomputed, dtype=np.float64)
    if stored.ndim != 1 or recomputed.ndim != 1:
        raise ValueError(f"parity_stats takes 1-D arrays, got shapes {stored.shape} and {recomputed.shape}")
    if len(stored) != len(recomputed):
        raise ValueError(f"parity_stats: {len(stored)} stored logprobs but {len(recomputed)} recomputed")
    if len(stored) == 0:
        raise ValueError("parity_stats: no tokens")
    for name, values in (("stored", stored), ("recomputed", recomputed)):
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise ValueError(f"parity_stats: {len(bad)} non-finite {name} logprobs (first at index {bad[0]}: {values[bad[0]]})")
    r = recomputed - stored
    delta = np.abs(r)
    ratio = np.exp(r)
    outside = (ratio < RATIO_BAND[0]) | (ratio > RATIO_BAND[1])
    return ParityStats(
        tokens=len(r),
        mean_abs=float(delta.mean()),
        p99_abs=float(np.quantile(delta, 0.99)),
        max_abs=float(delta.max()),
        ratio_mean=float(ratio.mean()),
        ratio_min=float(ratio.min()),
        ratio_max=float(ratio.max()),
        ratio_outside=float(outside.mean()),
        kl_k3=float(np.mean(np.expm1(r) - r)),
    )

@dataclass(frozen=True)
class ParityReport:
    """A parity check over exported rows: overall, per policy version, and what could not be checked."""

    #: None when no token was checked.
    overall: ParityStats | None
    by_version: dict[int, ParityStats]
    #: By the rows' sampling, named by `sampling_label`.
    by_sampling: dict[str, ParityStats]
    #: The stored logprobs against the raw distribution (no temperature, penalty or truncation), for contrast:
    #: what a server returning raw logprobs would have stored. Equal to `overall` at the seed's sampling.
    raw: ParityStats | None
    raw_by_sampling: dict[str, ParityStats]
    rows: int
    #: Generated tokens of a policy version no model was given for, by version (-1: rows without token versions).
    unchecked_tokens: dict[int, int] = field(default_factory=dict)
    #: Rows stored without their sampling (older releases): not checked.
    rows_without_sampling: int = 0
    #: Generated tokens the recomputed sampling distribution cannot draw (probability 0 after truncation).
    outside_support: int = 0

    def failures(self, max_mean: float | None = None, max_p99: float | None = None) -> list[str]:
        """Why the report breaks these bounds (empty when it keeps them, or when none is given)."""
        if max_mean is None and max_p99 is None:
            return []
        if self.overall is None:
            return ["no generated token was checked"]
        reasons = []
        if max_mean is not None and self.overall.mean_abs > max_mean:
            reasons.append(f"mean |Δ| {self.overall.mean_abs:.3g} > {max_mean:g}")
        if max_p99 is not None and self.overall.p99_abs > max_p99:
            reasons.append(f"p99 |Δ| {self.overall.p99_abs:.3g} > {max_p99:g}")
        if self.outside_support:
            reasons.append(f"{self.outside_support} sampled tokens are outside the recomputed sampling distribution")
        return reasons

    def as_dict(self) -> dict[str, Any]:
        return {
            "overall": None if self.overall is None else self.overall.as_dict(),
            "by_version": {str(version): stats.as_dict() for version, stats in sorted(self.by_version.items())},
            "by_sampling": {label: stats.as_dict() for label, stats in sorted(self.by_sampling.items())},
            "raw": None if self.raw is None else self.raw.as_dict(),
            "raw_by_sampling": {label: stats.as_dict() for label, stats in sorted(self.raw_by_sampling.items())},
            "rows": self.rows,
            "unchecked_tokens": {str(version): count for version, count in sorted(self.unchecked_tokens.items())},
            "rows_without_sampling": self.rows_without_sampling,
            "outside_support": self.outside_support,
        }

def sampling_label(sampling: Sampling) -> str:
    """How a report names a sampling: `temperature=0.7 top_p=1 top_k=-1 min_p=0 repetition_penalty=1`."""
    return " ".join(f"{name}={getattr(sampling, name):g}" for name in SAMPLING_COLUMNS)


@dataclass(frozen=True)
class CheckedTokens:
    """Some generated tokens of one policy version and sampling: stored, recomputed at the sampling, and raw."""

    version: int
    sampling: str
    stored: np.ndarray
    recomputed: np.ndarray
    raw: np.ndarray


def parity_report(checked: list[CheckedTokens], rows: int, unchecked: dict[int, int], rows_without_sampling: int) -> ParityReport:
    def stats(part: list[CheckedTokens]) -> ParityStats | None:
        stored, recomputed = np.concatenate([c.stored for c in part]), np.concatenate([c.recomputed for c in part])
        finite = np.isfinite(recomputed)  # a token outside the recomputed support is counted apart
        return parity_stats(stored[finite], recomputed[finite]) if finite.any() else None

    def raw(part: list[CheckedTokens]) -> ParityStats:
        return parity_stats(np.concatenate([c.stored for c in part]), np.concatenate([c.raw for c in part]))

    def grouped(key: Callable[[CheckedTokens], Any], of: Callable[[list[CheckedTokens]], ParityStats | None] = stats) -> dict[Any, ParityStats]:
        groups: dict[Any, list[CheckedTokens]] = defaultdict(list)
        for part in checked:
            groups[key(part)].append(part)
        return {k: v for k, v in ((k, of(group)) for k, group in sorted(groups.items())) if v is not None}

    return ParityReport(
        overall=stats(checked) if checked else None,
        by_version=grouped(lambda c: c.version),
        by_sampling=grouped(lambda c: c.sampling),
        raw=raw(checked) if checked else None,
        raw_by_sampling=grouped(lambda c: c.sampling, raw),
        rows=rows,
        unchecked_tokens=unchecked,
        rows_without_sampling=rows_without_sampling,
        outside_support=sum(int((~np.isfinite(c.recomputed)).sum()) for c in checked),
    )

"""A training run's staleness bound, carried by every request so each trajectory is self-contained."""

from __future__ import annotations

import re
from dataclasses import dataclass

_RUN_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,200}$")


@dataclass(frozen=True)
class RunConfig:
    """AReaL's staleness control, counted in groups (the samples of one prompt)."""

    run_id: str
    #: η: how many policy versions a group may be behind the trainer when consumed (0 is synchronous RL).
    max_head_offpolicyness: int
    #: Groups per training step.
    batch_size: int
    #: Most groups generating at once.
    max_concurrent: int

    def __post_init__(self) -> None:
        if not _RUN_ID.match(self.run_id):
            raise ValueError(f"run_id {self.run_id!r}: 1-200 letters, digits and . _ : @ - only")
        if self.max_head_offpolicyness < 0 or self.batch_size < 1 or self.max_concurrent < 1:
            raise ValueError("max_head_offpolicyness must be >= 0, batch_size and max_concurrent >= 1")

    def to_request(self) -> dict[str, object]:
        """The `run` object of a trajectory request (trajectory-request.schema.json)."""
        return {
            "runId": self.run_id,
            "maxHeadOffpolicyness": self.max_head_offpolicyness,
            "batchSize": self.batch_size,
            "maxConcurrent": self.max_concurrent,
        }


def group_id(run_id: str, qid: str, tag: str | None = None) -> str:
    """The group id of a prompt in a run, as the TypeScript client makes it; `tag` tells a resubmission apart."""
    return f"{run_id}/{qid}@{tag}" if tag else f"{run_id}/{qid}"

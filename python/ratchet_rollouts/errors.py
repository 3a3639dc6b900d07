"""Typed errors of the trainer protocol. Each maps a SQLSTATE raised by the ratchet_* Postgres functions of the migrations."""

from __future__ import annotations


class RatchetError(Exception):
    """Base of every error this package raises on purpose."""


class UnknownRun(RatchetError):
    """No such run: a run is created by the first submission to it."""


class UnknownBatch(RatchetError):
    """No such batch, a malformed batch id, or a batch already acknowledged (for extend)."""


class LeaseLost(RatchetError):
    """The batch's lease ran out and another consumer claimed some of its groups: drop the batch."""


class RunConfigMismatch(RatchetError):
    """The run exists with other settings (staleness bound, batch size, concurrency)."""


class PolicyVersionConflict(RatchetError):
    """The version is not newer than the latest published one: versions only go forward."""


class InvalidTrainingStep(RatchetError, ValueError):
    """A training step that cannot be recorded: a negative step or version, a metric that is not a finite number."""


class InvalidTrajectoryRequest(RatchetError):
    """A request the trajectory workflow would reject; nothing was started."""


class DatasetNotFound(RatchetError):
    """A dataset file does not exist or cannot be read."""


# SQLSTATE → error, as raised by ratchet_* functions in the migrations.
SQLSTATE_ERRORS: dict[str, type[RatchetError]] = {
    "RV001": PolicyVersionConflict,
    "RV002": UnknownRun,
    "RV003": LeaseLost,
    "RV004": UnknownBatch,
    "RV005": RunConfigMismatch,
    "RV006": InvalidTrainingStep,
}


class WeightsRefused(RatchetError):
    """A published version was refused by an inference server: the weights failed to load or the probe showed the
    server does not serve them (`rows` holds the served-weights ledger rows of the refusals). No token was tagged
    with the version on that server."""

    def __init__(self, message: str, rows: list[dict[str, object]] | None = None) -> None:
        super().__init__(message)
        self.rows = rows or []

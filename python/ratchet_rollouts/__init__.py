"""Ratchet for Python trainers: submit problems as groups, consume finished groups as leased batches (Arrow,
numpy views, torch), acknowledge them and publish policy versions, against Temporal and Postgres directly; and
serve RL environments written in Python (`Environment`, `serve`, `ratchet-env serve`)."""

import importlib
from typing import TYPE_CHECKING, Any

from .batch import Batch
from .client import RolloutClient, SubmittedGroup
from .environment import Action, Environment, EnvironmentFailure, EnvironmentTask, Message, StepResult
from .errors import (
    DatasetNotFound,
    InvalidTrainingStep,
    InvalidTrajectoryRequest,
    LeaseLost,
    PolicyVersionConflict,
    RatchetError,
    RunConfigMismatch,
    UnknownBatch,
    UnknownRun,
    WeightsRefused,
)
from .process_exit import exit_process
from .problems import LoadedDataset, Problem, RowError, load_dataset, load_problems
from .request import trajectory_request
from .run_config import RunConfig, group_id
from .store import ClaimedTrajectory, TrainingStep
from .sync import SyncRolloutClient
from .training_arrays import PackedColumn, grpo_advantages
from .training_steps import TRAINING_METRICS

if TYPE_CHECKING:
    from .environment_worker import EnvironmentActivities, EnvironmentLoadError, build_environment_worker, load_environment, serve, task_queue_for

# The worker's names are imported when first used, not with the package: `python -m ratchet_rollouts.environment_worker`
# would otherwise find the module already imported and run a second copy of it.
_ENVIRONMENT_WORKER = frozenset(
    {"EnvironmentActivities", "EnvironmentLoadError", "build_environment_worker", "load_environment", "serve", "task_queue_for"}
)


def __getattr__(name: str) -> Any:
    if name in _ENVIRONMENT_WORKER:
        return getattr(importlib.import_module(".environment_worker", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Action",
    "Batch",
    "ClaimedTrajectory",
    "DatasetNotFound",
    "Environment",
    "EnvironmentActivities",
    "EnvironmentFailure",
    "EnvironmentLoadError",
    "EnvironmentTask",
    "InvalidTrainingStep",
    "InvalidTrajectoryRequest",
    "LeaseLost",
    "LoadedDataset",
    "Message",
    "PackedColumn",
    "PolicyVersionConflict",
    "Problem",
    "RatchetError",
    "RolloutClient",
    "RowError",
    "RunConfig",
    "RunConfigMismatch",
    "StepResult",
    "SubmittedGroup",
    "SyncRolloutClient",
    "TRAINING_METRICS",
    "TrainingStep",
    "UnknownBatch",
    "UnknownRun",
    "WeightsRefused",
    "build_environment_worker",
    "exit_process",
    "group_id",
    "grpo_advantages",
    "load_dataset",
    "load_environment",
    "load_problems",
    "serve",
    "task_queue_for",
    "trajectory_request",
]

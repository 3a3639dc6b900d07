"""Ratchet for Python trainers: submit problems as groups, consume finished groups as leased batches (Arrow,
numpy views, torch), acknowledge them and publish policy versions, against Temporal and Postgres directly."""

from .batch import Batch
from .client import RolloutClient, SubmittedGroup
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
)
from .problems import LoadedDataset, Problem, RowError, load_dataset, load_problems
from .request import trajectory_request
from .run_config import RunConfig, group_id
from .store import ClaimedTrajectory, TrainingStep
from .sync import SyncRolloutClient
from .training_arrays import PackedColumn, grpo_advantages
from .training_steps import TRAINING_METRICS

__all__ = [
    "Batch",
    "ClaimedTrajectory",
    "DatasetNotFound",
    "InvalidTrainingStep",
    "InvalidTrajectoryRequest",
    "LeaseLost",
    "LoadedDataset",
    "PackedColumn",
    "PolicyVersionConflict",
    "Problem",
    "RatchetError",
    "RolloutClient",
    "RowError",
    "RunConfig",
    "RunConfigMismatch",
    "SubmittedGroup",
    "SyncRolloutClient",
    "TRAINING_METRICS",
    "TrainingStep",
    "UnknownBatch",
    "UnknownRun",
    "group_id",
    "grpo_advantages",
    "load_dataset",
    "load_problems",
    "trajectory_request",
]

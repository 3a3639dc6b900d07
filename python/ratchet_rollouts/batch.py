"""A leased batch of finished groups: Arrow, numpy views, torch tensors."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .store import ClaimedTrajectory
from .training_arrays import PackedColumn, padded_arrays

if TYPE_CHECKING:
    import torch


@dataclass
class Batch:
    """Finished groups claimed by one consumer until `lease_expires_at`. Acknowledge it once trained on; an
    unacknowledged batch's groups go to the next consumer when the lease runs out."""

    batch_id: str
    run_id: str
    #: The latest policy version when the batch was claimed.
    policy_version: int
    lease_expires_at: datetime
    group_ids: list[str]
    trajectories: list[ClaimedTrajectory]
    #: The Arrow export's columns, one row per completed trajectory, group by group.
    table: pa.Table
    _numpy: dict[str, PackedColumn] | None = field(default=None, repr=False)

    @property
    def stale_trajectories(self) -> int:
        return sum(t.stale for t in self.trajectories)

    def to_numpy(self) -> dict[str, PackedColumn]:
        """Every list column as packed values and offsets: views of the table's Arrow buffers (no copy)."""
        if self._numpy is None:
            columns: dict[str, PackedColumn] = {}
            for name in self.table.column_names:
                column = self.table.column(name)
                if not pa.types.is_list(column.type):
                    continue
                chunk = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
                columns[name] = PackedColumn(chunk.values.to_numpy(zero_copy_only=True), chunk.offsets.to_numpy(zero_copy_only=True))
            self._numpy = columns
        return self._numpy

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Padded [rows, longest] numpy arrays: input_ids, loss_mask, old_logprobs, advantages (GRPO per group)."""
        return padded_arrays(self.to_numpy(), self.table.column("group_id").to_pylist())

    def to_torch(self, device: Any = None) -> dict[str, torch.Tensor]:
        """`to_arrays` as torch tensors (sharing memory on the CPU). Needs `pip install ratchet-rollouts[torch]`."""
        try:
            import torch
        except ImportError as error:
            raise ImportError("Batch.to_torch needs torch: pip install 'ratchet-rollouts[torch]'") from error
        tensors = {name: torch.from_numpy(array) for name, array in self.to_arrays().items()}
        return tensors if device is None else {name: tensor.to(device) for name, tensor in tensors.items()}

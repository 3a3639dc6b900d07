"""A synchronous facade over RolloutClient, for plain training loops: one private event loop runs every call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from .batch import Batch
from .client import RolloutClient, SubmittedGroup
from .problems import Problem
from .run_config import RunConfig
from .store import TrainingStep


class SyncRolloutClient:
    """`SyncRolloutClient.connect(...)` takes RolloutClient.connect's arguments; use it as a context manager."""

    def __init__(self, loop: asyncio.AbstractEventLoop, client: RolloutClient) -> None:
        self._loop = loop
        self.client = client

    @classmethod
    def connect(cls, *args: Any, **kwargs: Any) -> SyncRolloutClient:
        loop = asyncio.new_event_loop()
        return cls(loop, loop.run_until_complete(RolloutClient.connect(*args, **kwargs)))

    def submit(self, run: RunConfig, problems: Sequence[Problem], samples: int, rollout: Mapping[str, Any] | None = None, **kwargs: Any) -> list[SubmittedGroup]:
        return self._loop.run_until_complete(self.client.submit(run, problems, samples, rollout, **kwargs))

    def consume(self, run_id: str, batch_size: int, **kwargs: Any) -> Batch | None:
        return self._loop.run_until_complete(self.client.consume(run_id, batch_size, **kwargs))

    def batches(self, run_id: str, batch_size: int, **kwargs: Any) -> Iterator[Batch]:
        kwargs.setdefault("wait_s", 60)
        while True:
            batch = self.consume(run_id, batch_size, **kwargs)
            if batch is not None:
                yield batch

    def ack(self, batch_id: str) -> bool:
        return self._loop.run_until_complete(self.client.ack(batch_id))

    def extend_lease(self, batch_id: str, lease_s: float) -> datetime:
        return self._loop.run_until_complete(self.client.extend_lease(batch_id, lease_s))

    def release(self, batch_id: str) -> int:
        return self._loop.run_until_complete(self.client.release(batch_id))

    def publish_policy_version(self, version: int, weights_path: str | None = None, reference: dict[str, Any] | None = None) -> None:
        self._loop.run_until_complete(self.client.publish_policy_version(version, weights_path, reference))

    def wait_for_weights(self, version: int, servers: int = 1, timeout_s: float = 600.0) -> list[dict[str, Any]]:
        return self._loop.run_until_complete(self.client.wait_for_weights(version, servers, timeout_s))

    def policy_version(self) -> int:
        return self._loop.run_until_complete(self.client.policy_version())

    def record_training_step(self, run_id: str, step: int, policy_version: int, metrics: Mapping[str, float]) -> None:
        self._loop.run_until_complete(self.client.record_training_step(run_id, step, policy_version, metrics))

    def training_steps(self, run_id: str) -> list[TrainingStep]:
        return self._loop.run_until_complete(self.client.training_steps(run_id))

    def status(self, run_id: str) -> dict[str, Any] | None:
        return self._loop.run_until_complete(self.client.status(run_id))

    def cancel(self, *, run_id: str | None = None, group_id: str | None = None) -> int:
        return self._loop.run_until_complete(self.client.cancel(run_id=run_id, group_id=group_id))

    def close(self) -> None:
        self._loop.run_until_complete(self.client.close())
        self._loop.close()

    def __enter__(self) -> SyncRolloutClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

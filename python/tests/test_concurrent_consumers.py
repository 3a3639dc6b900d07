"""Two consumer processes never share a trajectory, and each batch holds whole groups."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from ratchet_rollouts import RolloutClient

from conftest import finished_run, lines, start_consumer


def test_two_consumer_processes_share_no_trajectory_and_get_whole_groups(env: dict[str, str]) -> None:
    async def prepare() -> None:
        async with await RolloutClient.connect() as client:
            await finished_run(client, "py-concurrent", groups=12, offset=24)

    asyncio.run(prepare())
    start_at = str(time.time() + 4)  # both connected by then, even on a busy machine
    consumers = [start_consumer(env, "drain", "py-concurrent", "2", "120", start_at) for _ in range(2)]
    outputs = []
    for consumer in consumers:
        stdout, stderr = consumer.communicate(timeout=120)
        assert consumer.returncode == 0, stderr
        outputs.append(lines(stdout))

    batches = [batch for output in outputs for batch in output]
    handed_out = [group for batch in batches for group in batch["group_ids"]]
    assert len(handed_out) == 12 and len(set(handed_out)) == 12
    for batch in batches:
        # Whole groups: both samples of every group in the batch, and nothing else.
        assert Counter(batch["row_groups"]) == {group: 2 for group in batch["group_ids"]}
    # Each held its batches a moment, so both got some: they really ran side by side.
    assert all(output for output in outputs), [len(output) for output in outputs]
    ids = [batch["batch_id"] for batch in batches]
    assert len(set(ids)) == len(ids) == 6

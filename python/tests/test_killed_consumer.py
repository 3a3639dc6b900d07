"""A consumer SIGKILLed while holding a batch: its groups come back once the lease runs out, and its batch can
no longer be acknowledged."""

from __future__ import annotations

import asyncio
import json
import signal
import time

import pytest

from ratchet_rollouts import LeaseLost, RolloutClient

from conftest import finished_run, start_consumer

LEASE_S = 8.0  # long enough to see the batch still held after the kill, on a busy machine


def test_a_killed_consumers_groups_come_back_after_the_lease(env: dict[str, str]) -> None:
    async def prepare() -> None:
        async with await RolloutClient.connect() as client:
            await finished_run(client, "py-killed", groups=2, offset=36)

    asyncio.run(prepare())
    holder = start_consumer(env, "hold", "py-killed", "2", str(LEASE_S))
    assert holder.stdout is not None
    held = json.loads(holder.stdout.readline())
    claimed_at = time.monotonic()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert holder.returncode == -signal.SIGKILL

    async def after_kill() -> None:
        async with await RolloutClient.connect() as client:
            # Still leased to the dead process: nothing to hand out.
            assert await client.consume("py-killed", batch_size=2, wait_s=0) is None
            batch = await client.consume("py-killed", batch_size=2, lease_s=60, wait_s=60)
            waited = time.monotonic() - claimed_at
            assert batch is not None
            assert sorted(batch.group_ids) == sorted(held["group_ids"])
            assert batch.batch_id != held["batch_id"]
            assert waited >= LEASE_S - 1
            with pytest.raises(LeaseLost, match="handed to another consumer"):
                await client.ack(held["batch_id"])
            assert await client.ack(batch.batch_id) is False

    asyncio.run(after_kill())

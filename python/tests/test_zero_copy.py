"""A batch's numpy columns are views of its Arrow buffers, which hold exactly the bytes Postgres stored."""

from __future__ import annotations

import asyncio

import numpy as np
import psycopg

from ratchet_rollouts import RolloutClient

from conftest import finished_run


def test_numpy_columns_are_views_of_the_arrow_buffers(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            await finished_run(client, "py-views", groups=2, offset=4)
            batch = await client.consume("py-views", batch_size=2, wait_s=30)
            assert batch is not None
            columns = batch.to_numpy()
            for name, dtype in (("packed_input_ids", np.int32), ("packed_logprobs", np.float32), ("prompt_mask", np.int8), ("token_versions", np.int32)):
                chunk = batch.table.column(name).chunk(0)
                values, offsets = columns[name]
                arrow_values = np.frombuffer(chunk.values.buffers()[1], dtype=dtype)
                assert values.dtype == dtype and not values.flags.owndata
                assert np.shares_memory(values, arrow_values) and values.ctypes.data == chunk.values.buffers()[1].address
                assert np.shares_memory(offsets, np.frombuffer(chunk.buffers()[1], dtype=np.int32))
            # The bytes are the stored ones, row by row.
            ids = columns["packed_input_ids"]
            for row, trajectory_id in enumerate(batch.table.column("trajectory_id").to_pylist()):
                stored = (await (await client.database.execute("SELECT packed_input_ids FROM trajectories WHERE trajectory_id = %s", (trajectory_id,))).fetchone())
                assert stored is not None
                assert np.array_equal(ids.row(row), np.frombuffer(stored[0], dtype="<i4"))
            # Padded arrays: the loss mask covers the generated tokens exactly; every sequence has L - 1 logprobs.
            arrays = batch.to_arrays()
            assert arrays["loss_mask"].sum() == (1 - columns["prompt_mask"].values).sum()
            assert len(columns["packed_logprobs"].values) == len(ids.values) - len(columns["seqlens"].values)
            assert np.array_equal(arrays["input_ids"][0, : len(ids.row(0))], ids.row(0))
            await client.ack(batch.batch_id)

    asyncio.run(main())

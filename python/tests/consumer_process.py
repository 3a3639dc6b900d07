"""A consumer in its own process: `drain` consumes and acknowledges until nothing is left; `hold` claims one
batch, prints it and waits to be killed. One JSON line per batch."""

from __future__ import annotations

import asyncio
import json
import sys

from ratchet_rollouts import RolloutClient


async def main(mode: str, run_id: str, batch_size: int, lease_s: float) -> None:
    client = await RolloutClient.connect()
    try:
        while True:
            batch = await client.consume(run_id, batch_size, lease_s=lease_s, wait_s=0 if mode == "drain" else 60, consumer=f"{mode}-process")
            if batch is None:
                return
            rows = batch.table.column("group_id").to_pylist()
            print(json.dumps({"batch_id": batch.batch_id, "group_ids": batch.group_ids, "row_groups": rows}), flush=True)
            if mode == "hold":
                await asyncio.sleep(3600)
            await client.ack(batch.batch_id)
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))

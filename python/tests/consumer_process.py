"""A consumer in its own process: `drain` consumes and acknowledges until nothing is left, holding each batch a
moment as a training step would; `hold` claims one batch, prints it and waits to be killed. One JSON line per
batch. Both start consuming at the wall-clock time given (a barrier, so that consumers really overlap)."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from ratchet_rollouts import RolloutClient


async def main(mode: str, run_id: str, batch_size: int, lease_s: float, start_at: float) -> None:
    client = await RolloutClient.connect()
    try:
        await asyncio.sleep(max(0.0, start_at - time.time()))
        while True:
            batch = await client.consume(run_id, batch_size, lease_s=lease_s, wait_s=0 if mode == "drain" else 60, consumer=f"{mode}-process")
            if batch is None:
                return
            rows = batch.table.column("group_id").to_pylist()
            print(json.dumps({"batch_id": batch.batch_id, "group_ids": batch.group_ids, "row_groups": rows}), flush=True)
            if mode == "hold":
                await asyncio.sleep(3600)
            await asyncio.sleep(0.3)
            await client.ack(batch.batch_id)
    finally:
        await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]) if len(sys.argv) > 5 else 0.0))

"""Environment requests through the Python client, against the real stack: a dataset's own `environment` and
`environment_args`, and the client's `environment=` over a math dataset; served here, in this process, by `serve`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from ratchet_rollouts import RolloutClient, RunConfig, load_environment, load_problems, serve
from ratchet_rollouts.request import trajectory_request

from conftest import SAMPLE

REPO = Path(__file__).resolve().parents[2]
GUESS_DATA = REPO / "data" / "guess-number-sample.jsonl"
GUESS_NUMBER = REPO / "examples" / "environments" / "guess_number.py"


async def finished(client: RolloutClient, run_id: str, groups: int) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        status = await client.status(run_id)
        if status and status["unconsumed"] + status["consumed"] == groups:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"run {run_id}: {groups} groups did not finish in 180 s: {await client.status(run_id)}")


async def stored(client: RolloutClient, prefix: str) -> list[dict[str, Any]]:
    cursor = await client.database.execute(
        "SELECT t.trajectory_id, t.status, t.environment, t.end_reason, t.raw_rewards, "
        "array_agg(x.verdict ORDER BY x.turn) AS verdicts, array_agg(x.environment_step ORDER BY x.turn) AS steps "
        "FROM trajectories t JOIN turn_texts x USING (trajectory_id) WHERE t.trajectory_id LIKE %s "
        "GROUP BY 1, 2, 3, 4, 5 ORDER BY 1",
        (f"{prefix}%",),
    )
    names = [column.name for column in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in await cursor.fetchall()]


def test_a_request_carries_the_environment_of_its_row_or_of_the_argument() -> None:
    guess = load_problems(GUESS_DATA)
    run = RunConfig("py-env-shape", 1000, 1, 4)
    request = trajectory_request(run, guess[0], "g", 1, 0)
    assert (request["environment"], request["environmentArgs"], request["gold"]) == ("guess-number", {"low": 1, "high": 20}, [])
    other = trajectory_request(run, guess[0], "g", 1, 0, environment="slow-guess", environment_args={"low": 5})
    assert (other["environment"], other["environmentArgs"]) == ("slow-guess", {"low": 5})
    plain = trajectory_request(run, load_problems(SAMPLE)[0], "g", 1, 0)
    assert "environment" not in plain and "environmentArgs" not in plain


def test_submits_environment_requests_and_reads_them_back(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            stop = asyncio.Event()
            serving = asyncio.create_task(serve(load_environment(f"{GUESS_NUMBER}:GuessNumber"), client=client.temporal, stop=stop))
            try:
                # The rows' own environment (a game served above) ...
                games = RunConfig("py-env-guess", 1000, 4, 4)
                await client.submit(games, load_problems(GUESS_DATA), samples=1, rollout={"turns": 6})
                # ... and one given for every problem of a math dataset (built in: the CPU worker runs it).
                tools = RunConfig("py-env-tool", 1000, 3, 3)
                await client.submit(tools, load_problems(SAMPLE)[20:23], samples=1, rollout={"turns": 3}, environment="math-python-tool")
                await finished(client, "py-env-guess", 4)
                await finished(client, "py-env-tool", 3)
            finally:
                stop.set()
                await serving

            played = await stored(client, "py-env-guess/")
            assert [row["status"] for row in played] == ["completed"] * 4
            assert {row["environment"] for row in played} == {"guess-number"}
            for row in played:
                assert all(step["observations"][0]["role"] == "tool" for step in row["steps"])
                assert row["raw_rewards"] == [1.0 if verdict == "correct" else 0.0 for verdict in row["verdicts"]]
                assert row["end_reason"] == ("done" if row["verdicts"][-1] == "correct" else "turns")

            tooled = await stored(client, "py-env-tool/")
            assert [row["status"] for row in tooled] == ["completed"] * 3
            assert {row["environment"] for row in tooled} == {"math-python-tool"}
            for row in tooled:
                assert set(row["verdicts"][:-1]) <= {"tool_call"}
                assert all(step["observations"][0]["role"] == "tool" for step in row["steps"][:-1])

            batch = await client.consume("py-env-guess", batch_size=4, wait_s=30)
            assert batch is not None and sorted(batch.table.column("status").to_pylist()) == ["completed"] * 4
            await client.ack(batch.batch_id)

    asyncio.run(main())

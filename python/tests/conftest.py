"""The stack these tests run against: a real Temporal and a real Postgres with Ratchet's workers, started by the
vitest file test/python/python-package.test.ts, which runs pytest with TEMPORAL_ADDRESS and DATABASE_URL set."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ratchet_rollouts import RolloutClient, RunConfig, load_problems

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample.jsonl"
CONSUMER = Path(__file__).with_name("consumer_process.py")


def stack_env() -> dict[str, str]:
    missing = [name for name in ("TEMPORAL_ADDRESS", "DATABASE_URL") if not os.environ.get(name)]
    if missing:
        pytest.fail(f"{', '.join(missing)} unset: run these tests through `npx vitest run test/python/python-package.test.ts`")
    return dict(os.environ)


@pytest.fixture(scope="session")
def env() -> dict[str, str]:
    return stack_env()


async def finished_run(client: RolloutClient, run_id: str, groups: int, offset: int, samples: int = 2) -> RunConfig:
    """A run with no practical bound whose groups have all finished before anything is consumed."""
    run = RunConfig(run_id=run_id, max_head_offpolicyness=1000, batch_size=1, max_concurrent=64)
    await client.submit(run, load_problems(SAMPLE)[offset : offset + groups], samples=samples, rollout={"turns": 1})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = await client.status(run_id)
        if status and status["unconsumed"] == groups:
            return run
        await asyncio.sleep(0.2)
    raise AssertionError(f"run {run_id}: {groups} groups did not finish in 120 s: {await client.status(run_id)}")


def start_consumer(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """Another Python process consuming with the package, one JSON line per batch on stdout."""
    return subprocess.Popen([sys.executable, str(CONSUMER), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]

"""Drives a served environment as Ratchet's workflow would: one small workflow of its own (reset, then steps on the
environment's task queue), run by a worker in this process, then exits through `exit_process`. Used by
test/python/clean-exit.test.ts: `python drive_environment.py ADDRESS ENVIRONMENT WORKFLOWS`."""

from __future__ import annotations

import asyncio
import sys
import uuid
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ratchet_rollouts import exit_process
from ratchet_rollouts.environment_worker import RESET_ACTIVITY, STEP_ACTIVITY, task_queue_for


@workflow.defn
class DriveEnvironment:
    @workflow.run
    async def run(self, environment: str, steps: int) -> int:
        queue = task_queue_for(environment)
        timeout = timedelta(seconds=30)
        task: dict[str, Any] = {"trajectoryId": "drive", "qid": "q", "environment": environment, "problem": "p", "gold": ["1"], "args": {}, "seed": 3}
        start = await workflow.execute_activity(RESET_ACTIVITY, task, task_queue=queue, start_to_close_timeout=timeout)
        state = start.get("state")
        for turn in range(steps):
            action = {"turn": turn, "text": "\\boxed{50}", "finishReason": "stop", "state": state, "attempt": 1}
            result = await workflow.execute_activity(STEP_ACTIVITY, {**task, **action}, task_queue=queue, start_to_close_timeout=timeout)
            state = result.get("state")
        return steps


async def main(address: str, environment: str, workflows: int) -> int:
    client = await Client.connect(address)
    queue = f"drive-{uuid.uuid4()}"
    async with Worker(client, task_queue=queue, workflows=[DriveEnvironment], workflow_runner=UnsandboxedWorkflowRunner()):
        runs = [client.execute_workflow(DriveEnvironment.run, args=[environment, 3], id=f"{queue}-{i}", task_queue=queue) for i in range(workflows)]
        await asyncio.gather(*runs)
    print(f"drove {workflows} episodes", flush=True)
    return 0


if __name__ == "__main__":
    exit_process(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))

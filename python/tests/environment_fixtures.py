"""Environments the real-stack tests serve (test/integration/python-environment.test.ts), not collected by pytest:
a slow guess-the-number (steps in flight long enough to kill a worker under them) and one that fails on demand."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from ratchet_rollouts.environment import Action, Environment, EnvironmentFailure, EnvironmentTask, StepResult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "environments"))
from guess_number import GuessNumber  # noqa: E402


class SlowGuessNumber(GuessNumber):
    """Guess the number, each step taking `delay_s` seconds (args; default 1.5) on the event loop."""

    name = "slow-guess"

    async def step(self, action: Action) -> StepResult:
        await asyncio.sleep(float(self.task.args.get("delay_s", 1.5)))
        return await super().step(action)


class FailingGame(Environment):
    """Fails its first step as args `mode` says: `data` (EnvironmentFailure, data) or `crash` (an unhandled error)."""

    name = "failing-game"

    async def reset(self, task: EnvironmentTask) -> str:
        return "Say anything."

    async def step(self, action: Action) -> StepResult:
        if self.task.args.get("mode") == "data":
            raise EnvironmentFailure("this game has no such level", "data")
        raise RuntimeError("the game crashed")

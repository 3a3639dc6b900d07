"""Guess the number: the model guesses a secret whole number and hears "too low", "too high" or "correct" until it
gets it. Serve it with `ratchet-env serve examples/environments/guess_number.py:GuessNumber`; request args `low`,
`high` (default 1..100) and `secret` (default: drawn from the task's seed, so a retried step sees the same)."""

from __future__ import annotations

import random
import re

from ratchet_rollouts.environment import Action, Environment, EnvironmentTask, StepResult


class GuessNumber(Environment):
    name = "guess-number"

    async def reset(self, task: EnvironmentTask) -> str:
        low, high = int(task.args.get("low", 1)), int(task.args.get("high", 100))
        self.secret = int(task.args.get("secret", random.Random(task.seed).randint(low, high)))
        self.guesses = 0  # attributes are the episode's state: plain JSON values only
        return f"I am thinking of a whole number from {low} to {high}. Guess it, answering with \\boxed{{n}}."

    async def step(self, action: Action) -> StepResult:
        numbers = re.findall(r"\\boxed\{\s*(-?\d+)\s*\}", action.text) or re.findall(r"-?\d+", action.text)
        if not numbers:
            say = "I found no number in your answer: answer with \\boxed{n}."
            return StepResult([{"role": "tool", "content": say}], -1.0, False, False, "no_answer")
        guess, self.guesses = int(numbers[-1]), self.guesses + 1
        verdict = "correct" if guess == self.secret else "too_low" if guess < self.secret else "too_high"
        say = {"correct": "Correct!", "too_low": "Too low.", "too_high": "Too high."}[verdict]
        done = verdict == "correct"  # the workflow's turn limit ends a game that is never won
        return StepResult([{"role": "tool", "content": say}], 1.0 if done else 0.0, done, done, verdict,
                          predicted=str(guess), info={"guesses": self.guesses})

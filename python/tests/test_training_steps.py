"""record_training_step and training_steps against the real Postgres: what the run page charts."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from ratchet_rollouts import InvalidTrainingStep, RolloutClient, RunConfig, SyncRolloutClient, UnknownRun, store
from ratchet_rollouts.training_steps import checked_metrics

RUN = RunConfig(run_id="py-steps", max_head_offpolicyness=2, batch_size=1, max_concurrent=4)


def test_records_steps_in_order_and_a_redone_step_replaces_the_first(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            await client.submit(RUN, [], samples=1)  # makes the run, starts nothing
            await client.record_training_step("py-steps", 1, 2, {"loss": 0.5, "mean_reward": 0.25})
            await client.record_training_step("py-steps", 0, 1, {"loss": 0.75, "mean_reward": -0.5, "parity_mean_abs": 1e-5, "grad_norm": 3.0})
            # The trainer died mid-step 1 and redid it: one row, the second report's numbers.
            await client.record_training_step("py-steps", 1, 2, {"loss": 0.4, "mean_reward": np.float32(0.5), "tokens": np.int64(1200)})  # type: ignore[dict-item]
            steps = await client.training_steps("py-steps")
            assert [(s.step, s.policy_version) for s in steps] == [(0, 1), (1, 2)]
            # Unknown names are kept beside the known ones; numpy scalars arrive as plain numbers.
            assert steps[0].metrics == {"loss": 0.75, "mean_reward": -0.5, "parity_mean_abs": 1e-5, "grad_norm": 3.0}
            assert steps[1].metrics == {"loss": 0.4, "mean_reward": 0.5, "tokens": 1200}
            assert steps[1].recorded_at >= steps[0].recorded_at

    asyncio.run(main())


def test_refuses_a_run_never_submitted_to_and_a_step_out_of_shape(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            with pytest.raises(UnknownRun, match="no run py-no-such-run"):
                await client.record_training_step("py-no-such-run", 0, 1, {"loss": 1.0})
            await client.submit(RUN, [], samples=1)
            with pytest.raises(InvalidTrainingStep, match="metric loss is nan, not a finite number"):
                await client.record_training_step("py-steps", 5, 6, {"loss": math.nan})
            assert 5 not in [s.step for s in await client.training_steps("py-steps")]
            # Postgres holds the same rules for any client that skips the checks (RV006 → InvalidTrainingStep).
            with pytest.raises(InvalidTrainingStep, match="step and policy version must be non-negative"):
                await store.record_training_step(client.database, "py-steps", -1, 0, {})
            with pytest.raises(InvalidTrainingStep, match='metric loss is "low", not a number'):
                await store.record_training_step(client.database, "py-steps", 7, 0, {"loss": "low"})  # type: ignore[dict-item]

    asyncio.run(main())


def test_the_sync_client_records_and_reads_the_same_rows(env: dict[str, str]) -> None:
    with SyncRolloutClient.connect() as client:
        client.submit(RunConfig(run_id="py-steps-sync", max_head_offpolicyness=1, batch_size=1, max_concurrent=1), [], samples=1)
        client.record_training_step("py-steps-sync", 0, 1, {"version_lag_mean": 0.5, "version_lag_max": 1, "eta": 1})
        assert [(s.step, s.metrics) for s in client.training_steps("py-steps-sync")] == [(0, {"version_lag_mean": 0.5, "version_lag_max": 1, "eta": 1})]


@pytest.mark.parametrize(
    ("step", "version", "metrics", "message"),
    [
        (-1, 0, {}, "the step must be a non-negative integer, got -1"),
        (1.5, 0, {}, "the step must be a non-negative integer, got 1.5"),
        (0, -2, {}, "the policy version must be a non-negative integer, got -2"),
        (0, 0, {"loss": math.inf}, "metric loss is inf, not a finite number"),
        (0, 0, {"mean_reward": np.float32("nan")}, "metric mean_reward is .*nan.*, not a finite number"),
        (0, 0, {"done": True}, "metric done is True, not a finite number"),
        (0, 0, {"loss": "0.5"}, "metric loss is '0.5', not a finite number"),
        (0, 0, {"loss": np.array([0.5, 0.25])}, "metric loss is array.*, not a finite number"),
    ],
)
def test_names_what_is_wrong_with_a_step_before_it_reaches_postgres(step: object, version: object, metrics: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidTrainingStep, match=message):
        checked_metrics("r", step, version, metrics)  # type: ignore[arg-type]

"""The run's record: one entry per step (what `record_training_step` stores and the chart draws) and the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from ratchet_rollouts import Batch
from ratchet_rollouts.training_arrays import PackedColumn

#: The bounds a step's parity must keep (float32 on both sides): mean |Δ| and p99 |Δ| in nats.
PARITY_MEAN_BOUND = 0.02
PARITY_P99_BOUND = 0.1


class RunLog:
    #: The metrics each step records through `RolloutClient.record_training_step`.
    RECORDED = ("loss", "mean_reward", "parity_mean_abs", "parity_p99_abs", "parity_max_abs", "ratio_outside",
                "version_lag_mean", "version_lag_max", "eta", "tokens", "trajectories", "step_seconds")

    def __init__(self, path: Path | None, eta: int) -> None:
        self.path = path
        self.eta = eta
        self.entries: list[dict[str, Any]] = []
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def step(self, *, step: int, version: int, batch: Batch, successes: PackedColumn, metrics: dict[str, float],
             version_lag_mean: float, version_lag_max: int, token_versions: np.ndarray, tokens: int,
             step_seconds: float, reloaded: list[int]) -> dict[str, Any]:
        """The reward is the verifier's: the fraction of turns judged correct (0 to 1), overall and per turn."""
        per_row = [successes.row(i).astype(np.float64) for i in range(batch.table.num_rows)]
        turns = max(len(r) for r in per_row)
        by_turn = [float(np.mean([r[t] for r in per_row if len(r) > t])) for t in range(turns)]
        versions = token_versions[token_versions >= 0]
        entry: dict[str, Any] = {
            "event": "step", "step": step, "policy_version": version, "batch_id": batch.batch_id,
            "mean_reward": float(np.mean(np.concatenate(per_row))), "reward_by_turn": by_turn,
            "loss": metrics["loss"], "clip_fraction": metrics["clip_fraction"],
            "parity_tokens": metrics["parity_tokens"], "parity_mean_abs": metrics["parity_mean_abs"],
            "parity_p99_abs": metrics["parity_p99_abs"], "parity_max_abs": metrics["parity_max_abs"],
            "ratio_outside": metrics["parity_ratio_outside"], "kl_k3": metrics["parity_kl_k3"],
            "unchecked_tokens": metrics["unchecked_tokens"],
            "version_lag_mean": version_lag_mean, "version_lag_max": version_lag_max, "eta": self.eta,
            "token_versions": sorted({int(v) for v in versions}),
            "tokens": tokens, "trajectories": batch.table.num_rows, "stale": batch.stale_trajectories,
            "step_seconds": step_seconds, **{k: metrics[k] for k in ("wait_seconds", "compute_seconds", "publish_seconds", "submit_seconds")},
            "reloaded_so_far": len([v for v in reloaded if v > 0]),
        }
        self.entries.append(entry)
        if self.path is not None:
            with self.path.open("a") as out:
                out.write(json.dumps(entry) + "\n")
        return entry

    def summary(self, *, minutes: float, reloaded: list[int], published: int) -> dict[str, Any]:
        rewards = [e["mean_reward"] for e in self.entries]
        fifth = max(1, len(rewards) // 5)
        worst = max(self.entries, key=lambda e: e["parity_p99_abs"])
        return {
            "steps": len(self.entries),
            "published": published,
            "reloaded": len([v for v in reloaded if v > 0]),
            "reward_first_fifth": float(np.mean(rewards[:fifth])),
            "reward_last_fifth": float(np.mean(rewards[-fifth:])),
            "parity_mean_abs_max": max(e["parity_mean_abs"] for e in self.entries),
            "parity_p99_abs_max": worst["parity_p99_abs"],
            "parity_max_abs_max": max(e["parity_max_abs"] for e in self.entries),
            "parity_within_bounds": all(e["parity_mean_abs"] <= PARITY_MEAN_BOUND and e["parity_p99_abs"] <= PARITY_P99_BOUND
                                        and e["parity_tokens"] > 0 for e in self.entries),
            "version_lag_max": max(e["version_lag_max"] for e in self.entries),
            "eta": self.eta,
            "trajectories": sum(e["trajectories"] for e in self.entries),
            "minutes": minutes,
        }

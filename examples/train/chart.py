"""The run's chart from its own step records: reward by step (= policy version), per turn; parity per step against
its bounds; version lag of the consumed tokens against η."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from run_summary import PARITY_MEAN_BOUND, PARITY_P99_BOUND  # noqa: E402


def write_chart(entries: list[dict[str, Any]], path: Path, eta: int) -> Path:
    versions = [e["policy_version"] - 1 for e in entries]  # the version the trainer held when it consumed the batch
    figure, (reward, parity, lag) = plt.subplots(3, 1, figsize=(8, 9), sharex=True, height_ratios=[3, 2, 1.3])
    reward.plot(versions, [e["mean_reward"] for e in entries], "o-", color="black", label="all turns", markersize=3)
    turns = max(len(e["reward_by_turn"]) for e in entries)
    for t in range(turns):
        reward.plot(versions, [e["reward_by_turn"][t] if len(e["reward_by_turn"]) > t else float("nan") for e in entries],
                    "-", alpha=0.7, label=f"turn {t + 1}")
    window = max(1, len(entries) // 5)  # the summary compares the first and last fifth of the steps
    smooth = np.convolve([e["mean_reward"] for e in entries], np.ones(window) / window, mode="valid")
    reward.plot(versions[window - 1 :], smooth, "-", color="red", linewidth=2, label=f"mean of the last {window} steps")
    reward.set_ylabel("reward (fraction correct)")
    reward.set_ylim(-0.02, 1.02)
    reward.legend(loc="upper left")
    reward.set_title("Training through Ratchet: a tiny Qwen3 on a real vLLM (CPU)")
    parity.semilogy(versions, [max(e["parity_mean_abs"], 1e-9) for e in entries], "o-", markersize=3, label="mean |Δ logprob|")
    parity.semilogy(versions, [max(e["parity_p99_abs"], 1e-9) for e in entries], "s-", markersize=3, label="p99 |Δ|")
    parity.semilogy(versions, [max(e["parity_max_abs"], 1e-9) for e in entries], "^-", markersize=3, alpha=0.6, label="max |Δ|")
    parity.axhline(PARITY_MEAN_BOUND, color="C0", linestyle=":", label=f"mean bound {PARITY_MEAN_BOUND}")
    parity.axhline(PARITY_P99_BOUND, color="C1", linestyle=":", label=f"p99 bound {PARITY_P99_BOUND}")
    parity.set_ylabel("parity (nats)")
    parity.legend(loc="upper left", fontsize=7, ncol=2)
    lag.plot(versions, [e["version_lag_mean"] for e in entries], "o-", markersize=3, label="mean")
    lag.plot(versions, [e["version_lag_max"] for e in entries], "s-", markersize=3, label="max")
    lag.axhline(eta, color="red", linestyle=":", label=f"η = {eta}")
    lag.set_ylabel("version lag")
    lag.set_xlabel("policy version the trainer held (step)")
    lag.legend(loc="upper left", fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path

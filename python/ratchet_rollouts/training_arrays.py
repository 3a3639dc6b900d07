"""A batch's packed columns as padded training arrays: one row per trajectory, its sequences back to back."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class PackedColumn(NamedTuple):
    """A list column: row i is values[offsets[i]:offsets[i + 1]]."""

    values: np.ndarray
    offsets: np.ndarray

    def row(self, i: int) -> np.ndarray:
        return self.values[self.offsets[i] : self.offsets[i + 1]]


def grpo_advantages(returns: np.ndarray, group_ids: list[str], epsilon: float = 1e-6) -> np.ndarray:
    """GRPO: each trajectory's return against its group's mean, over the group's spread."""
    _, group_of = np.unique(np.asarray(group_ids, dtype=object), return_inverse=True)
    counts = np.bincount(group_of)
    means = np.bincount(group_of, weights=returns) / counts
    spreads = np.sqrt(np.bincount(group_of, weights=(returns - means[group_of]) ** 2) / counts)
    return ((returns - means[group_of]) / (spreads[group_of] + epsilon)).astype(np.float32)


def padded_arrays(columns: dict[str, PackedColumn], group_ids: list[str]) -> dict[str, np.ndarray]:
    """[rows, longest] arrays: token ids, the loss mask (generated tokens only), the behaviour policy's logprob of
    each token (0 where a sequence starts: the first token has none), and per-token GRPO advantages."""
    ids, mask, logprobs, seqlens, rewards = (columns[n] for n in ("packed_input_ids", "prompt_mask", "packed_logprobs", "seqlens", "rewards"))
    lengths = np.diff(ids.offsets)
    rows, width = len(lengths), int(lengths.max(initial=0))
    total = int(ids.offsets[-1])
    # Where each packed token lands: its trajectory's row, and its position in that row.
    row_of = np.repeat(np.arange(rows), lengths)
    column_of = np.arange(total) - np.repeat(ids.offsets[:-1], lengths)
    # A sequence of L tokens has L - 1 logprobs, for tokens 1..L-1: every token but a sequence's first gets one.
    starts = np.concatenate(([0], np.cumsum(seqlens.values, dtype=np.int64)[:-1])) if len(seqlens.values) else np.zeros(0, np.int64)
    has_logprob = np.ones(total, dtype=bool)
    has_logprob[starts] = False
    token_logprobs = np.zeros(total, dtype=np.float32)
    token_logprobs[has_logprob] = logprobs.values
    out: dict[str, np.ndarray] = {
        "input_ids": np.zeros((rows, width), dtype=np.int64),
        "loss_mask": np.zeros((rows, width), dtype=np.float32),
        "old_logprobs": np.zeros((rows, width), dtype=np.float32),
    }
    out["input_ids"][row_of, column_of] = ids.values
    out["loss_mask"][row_of, column_of] = 1 - mask.values
    out["old_logprobs"][row_of, column_of] = token_logprobs
    # A trajectory's return is its first turn's return-to-go.
    returns = rewards.values[rewards.offsets[:-1]].astype(np.float64) if rows else np.zeros(0)
    out["advantages"] = grpo_advantages(returns, group_ids)[:, None] * out["loss_mask"]
    return out

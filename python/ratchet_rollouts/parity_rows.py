"""Exported trajectory rows as the generated tokens a parity check recomputes: which tokens of which sequence, their
stored logprobs, the policy version that sampled each, and the sampling they were drawn with. Pure numpy."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from .batch import Batch

#: The sampling columns of an exported row (docs/behaviour-logprobs.md); null when a release did not store them.
SAMPLING_COLUMNS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")


@dataclass(frozen=True)
class Sampling:
    """The distribution a row's output tokens were drawn from, as vLLM's sampler applies it."""

    temperature: float
    top_p: float
    #: -1 (or 0): off.
    top_k: int
    min_p: float
    repetition_penalty: float


@dataclass(frozen=True)
class GeneratedTokens:
    """One packed sequence of a trajectory and the tokens the policy generated in it."""

    trajectory_id: str
    #: The sequence's token ids, prompt and feedback included: the context a recomputation runs over.
    input_ids: np.ndarray
    #: Where each generated token sits in `input_ids` (never 0: a sequence's first token has no logprob).
    positions: np.ndarray
    #: The behaviour logprob stored for each generated token (natural log).
    stored: np.ndarray
    #: The policy version that generated each token (-1 where the row has no per-token versions).
    versions: np.ndarray
    sampling: Sampling


class MalformedRow(ValueError):
    """A row whose packed columns disagree in length: the export is not one a trainer can use."""

    def __init__(self, trajectory_id: str, reason: str) -> None:
        super().__init__(f"trajectory {trajectory_id}: {reason}")
        self.trajectory_id = trajectory_id


def row_sampling(row: Mapping[str, Any]) -> Sampling | None:
    """The row's sampling, or None when it was stored without one (older releases, failed trajectories)."""
    values: list[Any] = [row.get(name) for name in SAMPLING_COLUMNS]
    if any(value is None for value in values):
        return None
    temperature, top_p, top_k, min_p, repetition_penalty = values
    return Sampling(float(temperature), float(top_p), int(top_k), float(min_p), float(repetition_penalty))


def generated_tokens(row: Mapping[str, Any], sampling: Sampling) -> list[GeneratedTokens]:
    """Each sequence of a row with its generated tokens. A sequence of L tokens has L - 1 logprobs, token j's at
    j - 1 (packed back to back); generated tokens are those outside the prompt mask (prompt and feedback)."""
    trajectory_id = str(row.get("trajectory_id"))
    ids = np.asarray(row["packed_input_ids"], dtype=np.int64)
    prompt_mask = np.asarray(row["prompt_mask"], dtype=bool)
    logprobs = np.asarray(row["packed_logprobs"], dtype=np.float64)
    seqlens = np.asarray(row["seqlens"], dtype=np.int64)
    versions = np.asarray(row.get("token_versions") or [], dtype=np.int64)
    if len(versions) == 0:
        versions = np.full(len(ids), -1, dtype=np.int64)
    if int(seqlens.sum()) != len(ids) or len(prompt_mask) != len(ids) or len(versions) != len(ids):
        raise MalformedRow(trajectory_id, f"{len(ids)} token ids, {len(prompt_mask)} mask entries, {len(versions)} versions, seqlens summing to {int(seqlens.sum())}")
    if len(logprobs) != len(ids) - len(seqlens):
        raise MalformedRow(trajectory_id, f"{len(logprobs)} logprobs for {len(seqlens)} sequences of {len(ids)} tokens (expected one per token but each sequence's first)")
    sequences: list[GeneratedTokens] = []
    start = logprob_start = 0
    for length in seqlens.tolist():
        generated = np.flatnonzero(~prompt_mask[start + 1 : start + length]) + 1
        if len(generated):
            sequences.append(
                GeneratedTokens(
                    trajectory_id,
                    ids[start : start + length],
                    generated,
                    logprobs[logprob_start + generated - 1],
                    versions[start + generated],
                    sampling,
                )
            )
        start += length
        logprob_start += length - 1
    return sequences


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a `ratchet export` or `ratchet consume` file: JSON lines, Parquet or Arrow IPC (file or stream),
    told apart by their first bytes."""
    path = Path(path)
    with path.open("rb") as file:
        magic = file.read(6)
    if magic.startswith(b"PAR1"):
        import pyarrow.parquet as pq

        return list(pq.read_table(path).to_pylist())
    if magic == b"ARROW1" or magic.startswith(b"\xff\xff\xff\xff"):
        import pyarrow.ipc as ipc

        with pa.memory_map(str(path)) as source:
            table = ipc.open_file(source).read_all() if magic == b"ARROW1" else ipc.open_stream(source).read_all()
        return list(table.to_pylist())
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def rows_of(source: str | Path | Batch | pa.Table | Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Rows from a file, a consumed `Batch`, an Arrow table or row mappings."""
    if isinstance(source, (str, Path)):
        yield from read_rows(source)
    elif isinstance(source, pa.Table):
        yield from source.to_pylist()
    elif isinstance(getattr(source, "table", None), pa.Table):
        table: pa.Table = getattr(source, "table")
        yield from table.to_pylist()
    else:
        rows: Iterable[Mapping[str, Any]] = source  # type: ignore[assignment]
        yield from rows

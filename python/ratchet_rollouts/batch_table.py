"""A consumed batch as a pyarrow.Table with the Arrow export's columns (src/export/trajectory-table.ts): packed
int32/float32/int8 list columns whose values buffers are the bytes Postgres sent, wrapped, never copied."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .store import Claim

#: The TypeScript export's format version: a trainer can refuse a table it does not understand.
TRAJECTORY_FORMAT_VERSION = "1"


def _list(element: pa.DataType) -> pa.DataType:
    return pa.list_(pa.field("item", element, nullable=False))


_PACKED_TYPES = {
    "packed_input_ids": pa.int32(),
    "packed_logprobs": pa.float32(),
    "prompt_mask": pa.int8(),
    "token_versions": pa.int32(),
    "packed_prompts": pa.int32(),
}
_PER_TURN_TYPES = {
    "seqlens": pa.int32(),
    "prompt_lens": pa.int32(),
    "seq_no_eos_mask": pa.int8(),
    "version_start": pa.int32(),
    "version_end": pa.int32(),
    "successes": pa.int8(),
    "raw_rewards": pa.float32(),
    "rewards": pa.float32(),
}

_SAMPLING_COLUMNS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")

SCHEMA = pa.schema(
    [
        pa.field("trajectory_id", pa.utf8(), nullable=False),
        pa.field("qid", pa.utf8(), nullable=False),
        pa.field("task_id", pa.int64()),
        pa.field("status", pa.utf8(), nullable=False),
        pa.field("layout", pa.utf8(), nullable=False),
        pa.field("environment", pa.utf8()),
        pa.field("end_reason", pa.utf8()),
        pa.field("error", pa.utf8()),
        pa.field("failure_type", pa.utf8()),
        pa.field("failure_class", pa.utf8()),
        pa.field("group_id", pa.utf8()),
        pa.field("birth_time", pa.int64(), nullable=False),
        pa.field("staleness", pa.int32()),
        pa.field("stale", pa.bool_()),
        pa.field("temperature", pa.float64()),
        pa.field("top_p", pa.float64()),
        pa.field("top_k", pa.int32()),
        pa.field("min_p", pa.float64()),
        pa.field("repetition_penalty", pa.float64()),
        pa.field("packed_input_ids", _list(pa.int32()), nullable=False),
        pa.field("packed_logprobs", _list(pa.float32()), nullable=False),
        pa.field("prompt_mask", _list(pa.int8()), nullable=False),
        pa.field("token_versions", _list(pa.int32()), nullable=False),
        pa.field("packed_prompts", _list(pa.int32()), nullable=False),
        pa.field("seqlens", _list(pa.int32()), nullable=False),
        pa.field("prompt_lens", _list(pa.int32()), nullable=False),
        pa.field("seq_no_eos_mask", _list(pa.int8()), nullable=False),
        pa.field("version_start", _list(pa.int32()), nullable=False),
        pa.field("version_end", _list(pa.int32()), nullable=False),
        pa.field("successes", _list(pa.int8()), nullable=False),
        pa.field("raw_rewards", _list(pa.float32()), nullable=False),
        pa.field("rewards", _list(pa.float32()), nullable=False),
    ],
    metadata={"ratchet.format_version": TRAJECTORY_FORMAT_VERSION},
)


def _packed(element: pa.DataType, data: bytes, row_bytes: list[int]) -> pa.Array:
    """A list column over `data` as is: the offsets are the only thing computed."""
    width = element.bit_width // 8
    offsets = np.zeros(len(row_bytes) + 1, dtype=np.int32)
    np.cumsum(np.asarray(row_bytes, dtype=np.int64) // width, out=offsets[1:])
    values = pa.Array.from_buffers(element, len(data) // width, [None, pa.py_buffer(data)])
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=_list(element))


def _per_turn(element: pa.DataType, lists: list[Any]) -> pa.Array:
    return pa.array([[int(x) if element == pa.int8() else x for x in (items or [])] for items in lists], type=_list(element))


def batch_table(claim: Claim, rows: list[dict[str, Any]], packed: dict[str, tuple[bytes, list[int]]]) -> pa.Table:
    """One record batch, one row per trajectory, group by group in the claim's order."""
    claims = {t.trajectory_id: t for t in claim.trajectories}
    columns: dict[str, pa.Array] = {}
    for name in ("trajectory_id", "qid", "task_id", "status", "layout", "environment", "end_reason", "error", "failure_type", "failure_class"):
        columns[name] = pa.array([row[name] for row in rows], type=SCHEMA.field(name).type)
    columns["group_id"] = pa.array([claims[row["trajectory_id"]].group_id for row in rows], type=pa.utf8())
    columns["birth_time"] = pa.array([row["birth_time"] for row in rows], type=pa.int64())
    columns["staleness"] = pa.array([claims[row["trajectory_id"]].staleness for row in rows], type=pa.int32())
    columns["stale"] = pa.array([claims[row["trajectory_id"]].stale for row in rows], type=pa.bool_())
    # The sampling the output tokens were drawn with: packed_logprobs are of that distribution (null when unknown).
    for name in _SAMPLING_COLUMNS:
        columns[name] = pa.array([row[name] for row in rows], type=SCHEMA.field(name).type)
    for name, element in _PACKED_TYPES.items():
        columns[name] = _packed(element, *packed[name])
    for name, element in _PER_TURN_TYPES.items():
        columns[name] = _per_turn(element, [row[name] for row in rows])
    record = pa.RecordBatch.from_arrays([columns[field.name] for field in SCHEMA], schema=SCHEMA)
    return pa.Table.from_batches([record], schema=SCHEMA)

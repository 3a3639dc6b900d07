"""Every Postgres statement of the package. The rules (exactly-once hand-out, leases, runs, versions) live in the
ratchet_* SQL functions of the migrations, shared with the TypeScript client; this module only calls them and
reads stored trajectories."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from .errors import SQLSTATE_ERRORS
from .run_config import RunConfig

T = TypeVar("T")

#: Notified when a member joins or a group finishes: a waiting consumer re-tries at once.
ADMISSION_CHANNEL = "ratchet_admission"


@dataclass(frozen=True)
class ClaimedTrajectory:
    trajectory_id: str
    group_id: str
    #: Policy version at hand-out minus the trajectory's oldest token version.
    staleness: int
    #: Staleness above the run's max_head_offpolicyness; still handed out, flagged and counted.
    stale: bool


@dataclass(frozen=True)
class Claim:
    batch_id: str
    policy_version: int
    lease_expires_at: datetime
    trajectories: list[ClaimedTrajectory]

    @property
    def group_ids(self) -> list[str]:
        return list(dict.fromkeys(t.group_id for t in self.trajectories))


@dataclass(frozen=True)
class TrainingStep:
    run_id: str
    step: int
    #: The policy version the trainer published after this step.
    policy_version: int
    metrics: dict[str, float]
    recorded_at: datetime


async def _protocol(call: Callable[[], Awaitable[T]]) -> T:
    """Runs a call of a ratchet_* function, turning its SQLSTATE into the package's typed error."""
    try:
        return await call()
    except psycopg.Error as error:
        typed = SQLSTATE_ERRORS.get(error.sqlstate or "")
        if typed is None:
            raise
        message = error.diag.message_primary or str(error)
        raise typed(message) from error


async def _scalar(conn: psycopg.AsyncConnection[Any], sql: str, params: Sequence[object]) -> Any:
    async def call() -> Any:
        cursor = await conn.execute(sql, params)
        row = await cursor.fetchone()
        return None if row is None else row[0]

    return await _protocol(call)


async def ensure_run(conn: psycopg.AsyncConnection[Any], run: RunConfig) -> None:
    await _scalar(conn, "SELECT ratchet_ensure_run(%s, %s, %s, %s)", (run.run_id, run.max_head_offpolicyness, run.batch_size, run.max_concurrent))


# Postgres text cannot hold U+0000, and a lone surrogate has no UTF-8 form: both become U+FFFD, as the TypeScript
# client's storableText does, so both clients record the same id for the same request.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


async def record_submissions(conn: psycopg.AsyncConnection[Any], trajectory_ids: Sequence[str]) -> None:
    """Records what is about to be submitted, before the workflows start (run_submissions, migration 013): the run
    page's submitted and queued counts then include it, as they do for the TypeScript client. Idempotent."""
    for at in range(0, len(trajectory_ids), 10_000):
        chunk = [_UNSTORABLE.sub("\ufffd", trajectory_id) for trajectory_id in trajectory_ids[at : at + 10_000]]
        await conn.execute("INSERT INTO run_submissions (trajectory_id) SELECT unnest(%s::text[]) ORDER BY 1 ON CONFLICT DO NOTHING", (chunk,))


async def claim_batch(conn: psycopg.AsyncConnection[Any], run_id: str, batch_size: int, consumer: str, lease_s: float, partial: bool) -> Claim | None:
    async def call() -> list[tuple[Any, ...]]:
        cursor = await conn.execute(
            "SELECT batch_id::text, policy_version, lease_expires_at, group_id, trajectory_id, staleness, stale"
            " FROM ratchet_claim_batch(%s, %s, %s, %s, %s)",
            (run_id, batch_size, consumer, lease_s, partial),
        )
        return await cursor.fetchall()

    rows = await _protocol(call)
    if not rows:
        return None
    trajectories = [ClaimedTrajectory(row[4], row[3], row[5], row[6]) for row in rows]
    return Claim(rows[0][0], rows[0][1], rows[0][2], trajectories)


async def ack_batch(conn: psycopg.AsyncConnection[Any], batch_id: str) -> bool:
    return bool(await _scalar(conn, "SELECT ratchet_ack_batch(%s)", (batch_id,)))


async def extend_lease(conn: psycopg.AsyncConnection[Any], batch_id: str, lease_s: float) -> datetime:
    result: datetime = await _scalar(conn, "SELECT ratchet_extend_lease(%s, %s)", (batch_id, lease_s))
    return result


async def release_batch(conn: psycopg.AsyncConnection[Any], batch_id: str) -> int:
    return int(await _scalar(conn, "SELECT ratchet_release_batch(%s)", (batch_id,)))


async def publish_policy_version(conn: psycopg.AsyncConnection[Any], version: int, weights_path: str | None, reference: dict[str, Any] | None = None) -> None:
    if reference is None:
        await _scalar(conn, "SELECT ratchet_publish_policy_version(%s, %s)", (version, weights_path))
    else:
        await _scalar(conn, "SELECT ratchet_publish_policy_version(%s, %s, %s::jsonb)", (version, weights_path, json.dumps(_checked_reference(reference))))


def _checked_reference(reference: dict[str, Any]) -> dict[str, Any]:
    """The probe reference as src/policy/weights-proof.ts reads it; refused here rather than by every GPU worker."""
    ids, logprobs = reference.get("token_ids"), reference.get("logprobs")
    if not isinstance(ids, list) or not isinstance(logprobs, list) or len(ids) != len(logprobs) or not 8 <= len(ids) <= 4096:
        raise ValueError("probe reference needs token_ids and logprobs of one length (8 to 4096): use weights_probe.probe_reference")
    if not all(isinstance(i, int) and i >= 0 for i in ids) or not all(isinstance(v, (int, float)) and math.isfinite(v) and v <= 0 for v in logprobs[1:]):
        raise ValueError("probe reference: token ids must be non-negative integers and logprobs finite and <= 0")
    return {"token_ids": ids, "logprobs": [None, *[float(v) for v in logprobs[1:]]], **({"dtype": str(reference["dtype"])} if "dtype" in reference else {})}


async def served_weights(conn: psycopg.AsyncConnection[Any], version: int) -> list[dict[str, Any]]:
    cursor = await conn.execute(
        "SELECT server, version, verdict, requested_at, loaded_at, decided_at, probe_tokens, mean_abs_delta, max_abs_delta, error_type, error"
        " FROM served_weights WHERE version = %s ORDER BY server", (version,))
    names = [column.name for column in cursor.description or []]
    return [dict(zip(names, row)) for row in await cursor.fetchall()]


async def latest_policy_version(conn: psycopg.AsyncConnection[Any]) -> int:
    return int(await _scalar(conn, "SELECT coalesce(max(version), 0) FROM policy_versions", ()))


async def cancel_groups(conn: psycopg.AsyncConnection[Any], run_id: str | None, group_id: str | None) -> list[str]:
    async def call() -> list[str]:
        cursor = await conn.execute("SELECT ratchet_cancel_groups(%s, %s)", (run_id, group_id))
        return [row[0] for row in await cursor.fetchall()]

    return await _protocol(call)


# The token columns, stored as little-endian bytea: concatenated in Postgres in the batch's order, they arrive as
# one buffer per column that Arrow and numpy wrap without a copy.
PACKED_COLUMNS = ("packed_input_ids", "packed_logprobs", "prompt_mask", "token_versions", "packed_prompts")
_PER_ROW = (
    "trajectory_id, qid, task_id, status, layout, environment, end_reason, error, failure_type, failure_class, birth_time,"
    " temperature, top_p, top_k, min_p, repetition_penalty,"
    " seqlens, prompt_lens, seq_no_eos_mask, version_start, version_end, successes, raw_rewards, rewards"
)


async def read_trajectory_columns(conn: psycopg.AsyncConnection[Any], trajectory_ids: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, tuple[bytes, list[int]]]]:
    """The stored trajectories with these ids, in the order given: their per-row fields, and for each packed
    column its bytes back to back with each row's byte length."""
    ids = list(trajectory_ids)
    ordered = "FROM unnest(%s::text[]) WITH ORDINALITY AS c(id, ord) JOIN trajectories t ON t.trajectory_id = c.id"
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(f"SELECT {_PER_ROW} {ordered} ORDER BY c.ord", (ids,))
        rows = await cursor.fetchall()
    aggregates = ", ".join(
        f"string_agg(coalesce(t.{name}, ''::bytea), ''::bytea ORDER BY c.ord), array_agg(coalesce(octet_length(t.{name}), 0) ORDER BY c.ord)"
        for name in PACKED_COLUMNS
    )
    # Binary results: bytea arrives as raw bytes, not as hex text to decode.
    async with conn.cursor(binary=True) as cursor:
        await cursor.execute(f"SELECT {aggregates} {ordered}", (ids,))
        packed = await cursor.fetchone()
    assert packed is not None
    columns = {name: (bytes(packed[2 * i] or b""), list(packed[2 * i + 1] or [])) for i, name in enumerate(PACKED_COLUMNS)}
    return rows, columns


async def run_status(conn: psycopg.AsyncConnection[Any], run_id: str) -> dict[str, Any] | None:
    """Where a run stands, in groups (the numbers of `ratchet runs status`, read from the same rows)."""
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(
            """SELECT r.run_id, r.max_head_offpolicyness, r.batch_size, r.max_concurrent,
                 (SELECT coalesce(max(version), 0) FROM policy_versions) AS policy_version,
                 count(g.*) FILTER (WHERE g.status = 'pending' AND g.finished_at IS NULL) AS waiting,
                 count(g.*) FILTER (WHERE g.status = 'admitted' AND g.finished_at IS NULL) AS running,
                 count(g.*) FILTER (WHERE g.status = 'admitted' AND g.finished_at IS NOT NULL AND g.completed > 0) AS accepted,
                 count(g.*) FILTER (WHERE g.status = 'admitted' AND g.finished_at IS NOT NULL AND g.completed = 0) AS rejected,
                 count(g.*) FILTER (WHERE g.status = 'cancelled') AS cancelled,
                 count(g.*) FILTER (WHERE g.status = 'admitted' AND g.finished_at IS NOT NULL AND g.completed > 0 AND g.consumed_at IS NULL) AS unconsumed,
                 count(g.*) FILTER (WHERE g.consumed_at IS NOT NULL) AS consumed,
                 -- Stale at hand-out, the run page's one "stale" (STALE_AT_HAND_OUT in src/store/read/run-aggregates.ts): over
                 -- max_head_offpolicyness at their latest hand-out, in any batch (acknowledged, pending, or lease run out).
                 (SELECT coalesce(sum(s.members), 0)::bigint FROM run_staleness s
                  WHERE s.run_id = r.run_id AND s.staleness > r.max_head_offpolicyness) AS stale_at_hand_out
               FROM rollout_runs r LEFT JOIN rollout_groups g ON g.run_id = r.run_id
               WHERE r.run_id = %s GROUP BY r.run_id""",
            (run_id,),
        )
        row = await cursor.fetchone()
        if row is None:
            return None
        # Queue, generate and verify latency now: p50/p95 in ms over the turns of the newest 50 stored trajectories,
        # migration 018's ratchet_turn_latency (the run page's and `ratchet runs status`'s one definition).
        await cursor.execute("SELECT * FROM ratchet_turn_latency(%s)", (run_id,))
        latency = await cursor.fetchone() or {}
    status = dict(row)
    status["latency"] = {
        phase: {
            "turns": int(latency.get(f"{phase}_turns") or 0),
            "p50": latency.get(f"{phase}_p50") if latency.get(f"{phase}_turns") else None,
            "p95": latency.get(f"{phase}_p95") if latency.get(f"{phase}_turns") else None,
        }
        for phase in ("queue", "generate", "verify")
    }
    return status


async def record_training_step(conn: psycopg.AsyncConnection[Any], run_id: str, step: int, policy_version: int, metrics: Mapping[str, float]) -> None:
    """Migration 009's ratchet_record_training_step, which the TypeScript client calls too: replaces a step recorded before."""
    await _scalar(conn, "SELECT ratchet_record_training_step(%s, %s, %s, %s)", (run_id, step, policy_version, Jsonb(dict(metrics))))


async def training_steps(conn: psycopg.AsyncConnection[Any], run_id: str) -> list[TrainingStep]:
    async with conn.cursor() as cursor:
        await cursor.execute("SELECT step, policy_version, metrics, recorded_at FROM training_steps WHERE run_id = %s ORDER BY step", (run_id,))
        rows = await cursor.fetchall()
    return [TrainingStep(run_id, row[0], row[1], row[2], row[3]) for row in rows]

"""The trainer's client: submit problems as groups, consume finished groups as leased batches, acknowledge them,
publish policy versions. Every piece of state lives in Temporal or Postgres, so any number of clients in any
number of processes (and the TypeScript client) can come and go."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any

import psycopg
from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes, WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from . import store
from .batch import Batch
from .batch_table import batch_table
from .errors import UnknownRun, WeightsRefused
from .problems import Problem
from .request import TRAJECTORY_TASK_QUEUE, TRAJECTORY_WORKFLOW, trajectory_request
from .run_config import RunConfig, group_id
from .settings import postgres_settings, temporal_connect_config
from .training_steps import checked_metrics

_QID = SearchAttributeKey.for_keyword("RatchetQid")
_STATUS = SearchAttributeKey.for_keyword("RatchetStatus")


@dataclass(frozen=True)
class SubmittedGroup:
    group_id: str
    qid: str
    trajectory_ids: list[str]
    #: Every member already existed: a resubmission, which started nothing new.
    duplicate: bool


class RolloutClient:
    """Connect with `await RolloutClient.connect()`; close with `await client.close()` or `async with`."""

    def __init__(self, temporal: Client, database: psycopg.AsyncConnection[Any], postgres_kwargs: dict[str, Any]) -> None:
        self.temporal = temporal
        self.database = database
        self._postgres_kwargs = postgres_kwargs

    @classmethod
    async def connect(
        cls,
        temporal_address: str | None = None,
        namespace: str | None = None,
        database_url: str | None = None,
        *,
        api_key: str | None = None,
        tls: bool | None = None,
        sslmode: str | None = None,
        sslrootcert: str | None = None,
    ) -> RolloutClient:
        """Arguments first, then the environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
        TEMPORAL_TLS*, DATABASE_URL (see `settings`)."""
        postgres = postgres_settings(database_url, sslmode, sslrootcert).connect_kwargs()
        temporal = await Client.connect(**temporal_connect_config(temporal_address, namespace, api_key, tls))
        database = await psycopg.AsyncConnection.connect(**postgres, autocommit=True)
        return cls(temporal, database, postgres)

    async def close(self) -> None:
        await self.database.close()

    async def __aenter__(self) -> RolloutClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        await self.close()

    async def submit(
        self,
        run: RunConfig,
        problems: Sequence[Problem],
        samples: int,
        rollout: Mapping[str, Any] | None = None,
        *,
        tag: str | None = None,
        timeouts: Mapping[str, Any] | None = None,
        environment: str | None = None,
        environment_args: Mapping[str, Any] | None = None,
    ) -> list[SubmittedGroup]:
        """Submits each problem as a group of `samples` trajectories; they wait for admission under the run's
        bound. Resubmitting a group starts nothing and comes back as a duplicate. Each problem runs in its own
        environment (its row's `environment` and `environment_args`) unless `environment` / `environment_args` say
        otherwise for all of them."""
        planned = []
        for problem in problems:
            group = group_id(run.run_id, problem.qid, tag)
            requests = [
                trajectory_request(run, problem, group, samples, s, rollout, timeouts, environment=environment, environment_args=environment_args)
                for s in range(samples)
            ]
            planned.append((group, problem, requests))
        # The run exists before any workflow starts: a consumer can ask for it at once, and settings that
        # contradict an existing run fail here rather than in every trajectory.
        await store.ensure_run(self.database, run)
        await store.record_submissions(self.database, [r["trajectoryId"] for _, _, requests in planned for r in requests])
        groups = []
        for group, problem, requests in planned:
            started = await asyncio.gather(*(self._start(request) for request in requests))
            groups.append(SubmittedGroup(group, problem.qid, [r["trajectoryId"] for r in requests], all(started)))
        return groups

    async def _start(self, request: dict[str, Any]) -> bool:
        """Starts one trajectory; True when it already existed (running or finished), which never runs twice."""
        try:
            await self.temporal.start_workflow(
                TRAJECTORY_WORKFLOW,
                request,
                id=request["trajectoryId"],
                task_queue=TRAJECTORY_TASK_QUEUE,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                search_attributes=TypedSearchAttributes([SearchAttributePair(_QID, request["qid"]), SearchAttributePair(_STATUS, "queued")]),
                static_summary=f"{request['qid']}: {request['problem'][:120]}",
            )
            return False
        except WorkflowAlreadyStartedError:
            return True

    async def consume(
        self,
        run_id: str,
        batch_size: int,
        *,
        lease_s: float = 600,
        wait_s: float = 600,
        partial: bool = False,
        consumer: str | None = None,
    ) -> Batch | None:
        """Claims the oldest `batch_size` finished groups of the run, waiting up to `wait_s`; None if none came.
        A finished group wakes the wait at once (LISTEN); a short poll covers lapsed leases."""
        who = consumer or f"{socket.gethostname()}:{os.getpid()}"
        deadline = time.monotonic() + wait_s
        listener = await psycopg.AsyncConnection.connect(**self._postgres_kwargs, autocommit=True) if wait_s > 0 else None
        try:
            if listener is not None:
                await listener.execute(f"LISTEN {store.ADMISSION_CHANNEL}")
            while True:
                last = time.monotonic() >= deadline
                try:
                    claim = await store.claim_batch(self.database, run_id, batch_size, who, lease_s, partial and last)
                except UnknownRun:
                    # A consumer that starts with its trainer may ask before the first submission made the run.
                    if last:
                        raise
                    claim = None
                if claim is not None:
                    rows, packed = await store.read_trajectory_columns(self.database, [t.trajectory_id for t in claim.trajectories])
                    table = batch_table(claim, rows, packed)
                    return Batch(claim.batch_id, run_id, claim.policy_version, claim.lease_expires_at, claim.group_ids, claim.trajectories, table)
                if last or listener is None:
                    return None
                async for _ in listener.notifies(timeout=min(0.5, max(0.0, deadline - time.monotonic())), stop_after=1):
                    pass
        finally:
            if listener is not None:
                await listener.close()

    async def batches(self, run_id: str, batch_size: int, *, lease_s: float = 600, wait_s: float = 60, partial: bool = False, consumer: str | None = None) -> AsyncIterator[Batch]:
        """Batches as they become ready, for a training loop (`async for batch in client.batches(...)`). Acknowledge
        each once trained on; the loop ends when the caller stops iterating."""
        while True:
            batch = await self.consume(run_id, batch_size, lease_s=lease_s, wait_s=wait_s, partial=partial, consumer=consumer)
            if batch is not None:
                yield batch

    async def ack(self, batch_id: str) -> bool:
        """Marks the batch consumed: its groups are never handed out again. True if it already was (harmless).
        Raises LeaseLost when the lease ran out and another consumer claimed some of its groups."""
        return await store.ack_batch(self.database, batch_id)

    async def extend_lease(self, batch_id: str, lease_s: float) -> datetime:
        """Keeps the batch this consumer's for `lease_s` more seconds from now; returns the new expiry."""
        return await store.extend_lease(self.database, batch_id, lease_s)

    async def release(self, batch_id: str) -> int:
        """Gives the batch's groups back at once (this consumer cannot use them); returns how many."""
        return await store.release_batch(self.database, batch_id)

    async def publish_policy_version(self, version: int, weights_path: str | None = None, reference: dict[str, Any] | None = None) -> None:
        """Publishes the trainer's new version: GPU workers load it, prove it and only then tag tokens with it;
        admission lets more groups start. Versions only go forward (PolicyVersionConflict otherwise). `reference` is
        what each server's probe is compared with: `weights_probe.probe_reference(model)` on the model whose weights
        were just saved (or `weights_probe.reference_from_directory(weights_path)`); a real server refuses a version
        with weights but no reference unless its worker runs with RATCHET_WEIGHT_PROOF=optional."""
        await store.publish_policy_version(self.database, version, weights_path, reference)

    async def served_weights(self, version: int) -> list[dict[str, Any]]:
        """The served-weights ledger for one version: per server, its verdict (loading, proven, unproven, refused),
        when it was asked and loaded, the probe's mean and max |delta| and any typed error."""
        return await store.served_weights(self.database, version)

    async def wait_for_weights(self, version: int, servers: int = 1, timeout_s: float = 600.0) -> list[dict[str, Any]]:
        """Waits until `servers` servers have decided on `version`; returns their ledger rows. Raises WeightsRefused
        as soon as one refuses it, TimeoutError when they have not decided in time."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            rows = await store.served_weights(self.database, version)
            refused = [row for row in rows if row["verdict"] == "refused"]
            if refused:
                first = refused[0]
                raise WeightsRefused(f"policy version {version} refused on {first['server']}: {first['error_type']}: {first['error']}", refused)
            decided = [row for row in rows if row["verdict"] != "loading"]
            if len(decided) >= servers:
                return decided
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"policy version {version}: {len(decided)} of {servers} servers decided within {timeout_s} s")
            await asyncio.sleep(0.25)

    async def policy_version(self) -> int:
        """The latest published policy version (0 before the first publish)."""
        return await store.latest_policy_version(self.database)

    async def record_training_step(self, run_id: str, step: int, policy_version: int, metrics: Mapping[str, float]) -> None:
        """Records what one optimiser step did (loss, mean_reward, parity_*, version_lag_*, ... any numbers by name) and
        the policy version published after it, for the run page's charts. Recording a step again replaces it (a trainer
        that died mid-step redoes it). InvalidTrainingStep for a negative step or a non-finite metric, UnknownRun for
        a run never submitted to."""
        checked = checked_metrics(run_id, step, policy_version, metrics)
        await store.record_training_step(self.database, run_id, int(step), int(policy_version), checked)

    async def training_steps(self, run_id: str) -> list[store.TrainingStep]:
        """The run's recorded steps, in step order."""
        return await store.training_steps(self.database, run_id)

    async def status(self, run_id: str) -> dict[str, Any] | None:
        """Where a run stands, in groups; None for an unknown run. ``latency``: queue, generate and verify p50/p95 in ms
        (None where no turn was timed) over the turns of the newest 50 stored trajectories, as the run page and
        `ratchet runs status` define them."""
        return await store.run_status(self.database, run_id)

    async def cancel(self, *, run_id: str | None = None, group_id: str | None = None) -> int:
        """Cancels a run or a group: waiting groups are never admitted, running trajectories are cancelled.
        Returns how many trajectories were told to stop."""
        if (run_id is None) == (group_id is None):
            raise ValueError("cancel takes run_id or group_id")
        members = await store.cancel_groups(self.database, run_id, group_id)
        await asyncio.gather(*(self._cancel(self.temporal.get_workflow_handle(member)) for member in members))
        return len(members)

    @staticmethod
    async def _cancel(handle: WorkflowHandle[Any, Any]) -> None:
        try:
            await handle.cancel()
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise

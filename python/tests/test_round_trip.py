"""submit → consume → ack, publish and cancel, against the real stack."""

from __future__ import annotations

import asyncio

import pytest

from ratchet_rollouts import PolicyVersionConflict, RatchetError, RolloutClient, RunConfig, RunConfigMismatch, SyncRolloutClient, UnknownBatch, UnknownRun, WeightsRefused, load_problems

from conftest import SAMPLE


def test_submits_consumes_and_acknowledges_a_batch(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            run = RunConfig(run_id="py-round-trip", max_head_offpolicyness=1000, batch_size=2, max_concurrent=4)
            problems = load_problems(SAMPLE)[:3]
            groups = await client.submit(run, problems, samples=2, rollout={"turns": 2})
            assert [g.group_id for g in groups] == [f"py-round-trip/{p.qid}" for p in problems]
            assert not any(g.duplicate for g in groups)
            assert all(g.trajectory_ids == [f"{g.group_id}/0", f"{g.group_id}/1"] for g in groups)
            # Resubmitting starts nothing; other settings for the same run are refused before anything starts.
            assert all(g.duplicate for g in await client.submit(run, problems, samples=2, rollout={"turns": 2}))
            # Recorded as submitted once, as the TypeScript client records them: the run page's counts read these.
            cursor = await client.database.execute("SELECT sum(submitted) FROM run_trajectory_counts WHERE run_id = %s", ("py-round-trip",))
            row = await cursor.fetchone()
            assert row is not None and row[0] == 6
            with pytest.raises(RunConfigMismatch, match="was created with maxHeadOffpolicyness 1000"):
                await client.submit(RunConfig("py-round-trip", 3, 2, 4), problems, samples=2)

            batch = await client.consume("py-round-trip", batch_size=2, lease_s=120, wait_s=120)
            assert batch is not None
            assert len(batch.group_ids) == 2 and set(batch.group_ids) <= {g.group_id for g in groups}
            assert sorted(batch.table.column("group_id").to_pylist()) == sorted(batch.group_ids * 2)
            assert batch.table.schema.metadata[b"ratchet.format_version"] == b"1"
            assert set(batch.table.column("status").to_pylist()) == {"completed"}
            assert set(batch.table.column("environment").to_pylist()) == {"math"}  # the stored rows' own (issue 36)
            assert all(len(turns) == 2 for turns in batch.table.column("seqlens").to_pylist())
            # The sampling the tokens were drawn with, sent in full and stored: the seed's by default.
            sampling = {name: batch.table.column(name).to_pylist() for name in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")}
            assert sampling == {"temperature": [1.0] * 4, "top_p": [1.0] * 4, "top_k": [-1] * 4, "min_p": [0.0] * 4, "repetition_penalty": [1.0] * 4}
            arrays = batch.to_arrays()
            assert arrays["input_ids"].shape[0] == 4 and arrays["loss_mask"].sum() > 0

            lease = await client.extend_lease(batch.batch_id, 300)
            assert lease > batch.lease_expires_at
            assert await client.ack(batch.batch_id) is False
            assert await client.ack(batch.batch_id) is True  # twice is harmless
            with pytest.raises(UnknownBatch, match="already acknowledged"):
                await client.extend_lease(batch.batch_id, 60)
            with pytest.raises(UnknownBatch, match="not a batch id"):
                await client.ack("not-a-batch")
            status = await client.status("py-round-trip")
            assert status is not None and status["consumed"] == 2

            # The third group alone: held back unless a partial batch is asked for.
            assert await client.consume("py-round-trip", batch_size=2, wait_s=0) is None
            rest = await client.consume("py-round-trip", batch_size=2, wait_s=30, partial=True)
            assert rest is not None and len(rest.group_ids) == 1
            await client.ack(rest.batch_id)

            with pytest.raises(UnknownRun, match="no run py-nothing"):
                await client.consume("py-nothing", batch_size=1, wait_s=0)

    asyncio.run(main())


def test_publishes_versions_forward_only(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            version = await client.policy_version() + 1
            await client.publish_policy_version(version, weights_path=f"/checkpoints/{version}")
            assert await client.policy_version() == version
            with pytest.raises(PolicyVersionConflict, match="not newer"):
                await client.publish_policy_version(version)

    asyncio.run(main())


def test_publishes_a_probe_reference_and_hears_each_servers_verdict(env: dict[str, str]) -> None:
    """The reference is checked at publish (not found out by every GPU worker), stored with the version, and
    wait_for_weights raises WeightsRefused as soon as a server refuses the version (the ledger a GPU worker writes)."""
    reference = {"token_ids": list(range(8)), "logprobs": [None, *[-1.5] * 7], "dtype": "bfloat16"}

    async def main() -> None:
        async with await RolloutClient.connect() as client:
            version = await client.policy_version() + 1
            with pytest.raises(ValueError, match="one length"):
                await client.publish_policy_version(version, "/checkpoints/x", reference={"token_ids": [1, 2], "logprobs": [None]})
            with pytest.raises(ValueError, match="finite"):
                await client.publish_policy_version(version, "/checkpoints/x", reference={**reference, "logprobs": [None, *[float("nan")] * 7]})
            assert await client.policy_version() == version - 1
            await client.publish_policy_version(version, f"/checkpoints/{version}", reference=reference)
            conn = client.database
            stored = await (await conn.execute("SELECT probe_reference FROM policy_versions WHERE version = %s", (version,))).fetchone()
            assert stored is not None and stored[0]["token_ids"] == list(range(8))
            # The stack's GPU worker (the simulated policy, which has no weights to prove) records its own row too.
            with pytest.raises(TimeoutError):
                await client.wait_for_weights(version, servers=5, timeout_s=0.3)
            await conn.execute("INSERT INTO served_weights (server, version, verdict) VALUES ('a', %s, 'proven')", (version,))
            await conn.execute(
                "INSERT INTO served_weights (server, version, verdict, error_type, error) VALUES ('b', %s, 'refused', 'WeightsMismatch', 'off by 0.3')",
                (version,))
            with pytest.raises(WeightsRefused, match="refused on b: WeightsMismatch: off by 0.3") as refused:
                await client.wait_for_weights(version, servers=5, timeout_s=5)
            assert [row["server"] for row in refused.value.rows] == ["b"]

    asyncio.run(main())


def test_cancels_a_run_whose_groups_wait(env: dict[str, str]) -> None:
    async def main() -> None:
        async with await RolloutClient.connect() as client:
            # One group at a time: the later ones are still waiting for admission when the run is cancelled.
            run = RunConfig(run_id="py-cancel", max_head_offpolicyness=1000, batch_size=1, max_concurrent=1)
            await client.submit(run, load_problems(SAMPLE)[10:15], samples=2, rollout={"turns": 5})
            # A group exists once its first member has joined it (the member's first activity), and a member that
            # joins a cancelled group later ends without being told: cancel once all ten have joined.
            for _ in range(300):
                cursor = await client.database.execute(
                    "SELECT count(*) FROM rollout_members m JOIN rollout_groups g USING (group_id) WHERE g.run_id = %s", ("py-cancel",)
                )
                row = await cursor.fetchone()
                if row is not None and row[0] == 10:
                    break
                await asyncio.sleep(0.1)
            cancelled = await client.cancel(run_id="py-cancel")
            status = await client.status("py-cancel")
            assert status is not None and status["cancelled"] >= 1
            # Every member of a waiting group is unfinished; the one running group (max_concurrent 1), cancelled too,
            # may have a member finished already.
            assert cancelled >= 2 * status["cancelled"] - 1

    asyncio.run(main())


def test_the_synchronous_facade_consumes_and_acknowledges(env: dict[str, str]) -> None:
    with SyncRolloutClient.connect() as client:
        run = RunConfig(run_id="py-sync", max_head_offpolicyness=1000, batch_size=1, max_concurrent=4)
        client.submit(run, load_problems(SAMPLE)[20:22], samples=2, rollout={"turns": 1})
        batches = client.batches("py-sync", batch_size=1, lease_s=60, wait_s=60)
        seen = []
        for _ in range(2):
            batch = next(batches)
            seen += batch.group_ids
            assert client.ack(batch.batch_id) is False
        assert sorted(seen) == sorted(f"py-sync/{p.qid}" for p in load_problems(SAMPLE)[20:22])
        with pytest.raises(UnknownBatch, match="no batch") as raised:
            client.ack("00000000-0000-0000-0000-000000000000")
        assert isinstance(raised.value, RatchetError)

"""Consumption from Python: the package (Postgres → Arrow → numpy views) against the CLI path a trainer used before
(`ratchet consume --format arrow` into a file, memory-mapped, then `ratchet ack`), on batches of 64 trajectories
of 20K tokens. Seeds its own finished groups straight into Postgres (DATABASE_URL), so no rollout runs.

    RATCHET_CLI="node dist/cli/main.js" python consume_bench.py --batches 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import psycopg
import pyarrow as pa

from ratchet_rollouts import RolloutClient, RunConfig

TOKEN_COLUMNS = ("packed_input_ids", "packed_logprobs", "prompt_mask", "token_versions")


def seed(database_url: str, run_id: str, batches: int, rows: int, tokens: int, samples: int, turns: int) -> int:
    """Finished groups of `samples` trajectories, each `turns` sequences adding up to `tokens` tokens."""
    rng = np.random.default_rng(7)
    seq = tokens // turns
    prompt = rng.integers(0, 150_000, 512, dtype=np.int32)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SELECT ratchet_ensure_run(%s, 1000, %s, 64)", (run_id, rows // samples))
        for g in range(batches * rows // samples):
            group = f"{run_id}/q{g}"
            conn.execute(
                "INSERT INTO rollout_groups (group_id, run_id, qid, size, joined, status, finished, completed, birth_time, finished_at)"
                " VALUES (%s, %s, %s, %s, %s, 'admitted', %s, %s, %s, now())",
                (group, run_id, f"q{g}", samples, samples, samples, samples, g),
            )
            for s in range(samples):
                trajectory = f"{group}/{s}"
                ids = rng.integers(0, 150_000, seq * turns, dtype=np.int32)
                with conn.transaction():
                    conn.execute("INSERT INTO rollout_members (trajectory_id, group_id, sample, finished) VALUES (%s, %s, %s, true)", (trajectory, group, s))
                    conn.execute(
                        """INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, packed_input_ids, packed_logprobs,
                             prompt_mask, packed_prompts, seq_no_eos_mask, seqlens, prompt_lens, version_start, version_end, rewards, raw_rewards,
                             successes, token_versions, end_reason, output_tokens)
                           VALUES (%s, %s, 'completed', 'seed', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'turns', %s)""",
                        (
                            trajectory, f"q{g}", turns, g,
                            ids.tobytes(), rng.normal(-1, 0.5, (seq - 1) * turns).astype(np.float32).tobytes(),
                            (np.arange(seq * turns) % seq < seq // 2).astype(np.int8).tobytes(), prompt.tobytes(),
                            [False] * turns, [seq] * turns, [seq // 2] * turns, [0] * turns, [0] * turns,
                            [1.0] * turns, [1.0] * turns, [True] * turns, np.zeros(seq * turns, np.int32).tobytes(), seq * turns // 2,
                        ),
                    )
    return seq * turns


def token_bytes(table: pa.Table) -> int:
    return sum(table.column(name).chunk(0).values.nbytes for name in TOKEN_COLUMNS)


def touch(columns: dict[str, np.ndarray]) -> int:
    """What a trainer does first with a batch: read every token once (so lazily mapped pages are really read)."""
    return int(sum(int(values.view(np.uint8).sum(dtype=np.uint64)) for values in columns.values()))


async def with_package(run_id: str, groups: int, batches: int) -> list[tuple[float, int, int]]:
    results = []
    async with await RolloutClient.connect() as client:
        for _ in range(batches):
            started = time.perf_counter()
            batch = await client.consume(run_id, groups, wait_s=0)
            assert batch is not None
            columns = batch.to_numpy()
            touch({name: columns[name].values for name in TOKEN_COLUMNS})
            await client.ack(batch.batch_id)
            results.append((time.perf_counter() - started, batch.table.num_rows, token_bytes(batch.table)))
    return results


def with_cli(run_id: str, groups: int, batches: int, cli: list[str], scratch: Path) -> list[tuple[float, int, int]]:
    results = []
    for i in range(batches):
        started = time.perf_counter()
        out = scratch / f"batch-{i}.arrow"
        consumed = subprocess.run([*cli, "consume", "--run", run_id, "--batch-size", str(groups), "--format", "arrow", "--out", str(out), "--wait", "0"], capture_output=True, text=True, check=True)
        summary = json.loads(consumed.stdout.strip().splitlines()[-1])
        with pa.memory_map(str(out)) as source:
            table = pa.ipc.open_file(source).read_all()
            touch({name: table.column(name).chunk(0).values.to_numpy(zero_copy_only=True) for name in TOKEN_COLUMNS})
            rows, size = table.num_rows, token_bytes(table)
        subprocess.run([*cli, "ack", summary["batchId"]], capture_output=True, text=True, check=True)
        results.append((time.perf_counter() - started, rows, size))
        out.unlink()
    return results


def report(name: str, results: list[tuple[float, int, int]]) -> dict[str, object]:
    seconds = sum(r[0] for r in results)
    rows = sum(r[1] for r in results)
    size = sum(r[2] for r in results)
    return {
        "path": name, "batches": len(results), "rows_per_batch": results[0][1],
        "median_batch_ms": round(float(np.median([r[0] for r in results])) * 1000, 1),
        "trajectories_per_s": round(rows / seconds, 1), "token_MB_per_s": round(size / seconds / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=5, help="timed batches per path (one more warms each up)")
    parser.add_argument("--rows", type=int, default=64, help="trajectories per batch")
    parser.add_argument("--tokens", type=int, default=20_000, help="tokens per trajectory")
    parser.add_argument("--samples", type=int, default=8, help="trajectories per group")
    args = parser.parse_args()
    database_url = os.environ["DATABASE_URL"]
    cli = shlex.split(os.environ.get("RATCHET_CLI", "npx ratchet"))
    groups = args.rows // args.samples
    per_path = args.batches + 1
    run = RunConfig(run_id=f"bench-{int(time.time())}", max_head_offpolicyness=1000, batch_size=groups, max_concurrent=64)
    started = time.perf_counter()
    tokens = seed(database_url, run.run_id, 2 * per_path, args.rows, args.tokens, args.samples, turns=4)
    print(json.dumps({"event": "seeded", "trajectories": 2 * per_path * args.rows, "tokens_per_trajectory": tokens, "seconds": round(time.perf_counter() - started, 1)}), flush=True)
    package = asyncio.run(with_package(run.run_id, groups, per_path))[1:]
    with tempfile.TemporaryDirectory() as scratch:
        command = with_cli(run.run_id, groups, per_path, cli, Path(scratch))[1:]
    for line in (report("package", package), report("cli", command)):
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()

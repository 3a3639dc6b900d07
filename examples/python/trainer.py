"""A GRPO-shaped trainer loop on Ratchet, in Python.

It shows the three touch points a trainer has with Ratchet:

1. Submit: start `trajectory` workflows with Temporal's Python SDK, by workflow type name, with the JSON
   input documented in docs/trajectory-request.md. Each prompt is a group of n samples in a training run
   whose staleness bound (max_head_offpolicyness, batch size, max concurrent) travels with every request.
2. Consume: `ratchet consume --format arrow` claims the oldest finished groups as one batch and writes an
   Arrow IPC file; it is memory-mapped here and its packed int32/float32 columns become numpy arrays without
   a copy. The batch is acknowledged (`ratchet ack`) only after the step, so a trainer that dies mid-step
   gets its batch re-delivered to whoever consumes next, once the lease runs out.
3. Publish: after each step, the new policy version goes into Postgres with the same SQL function the
   TypeScript side uses; GPU workers load it and admission lets more groups start.

The "training" is a stand-in (GRPO advantages and a token-weighted objective in numpy): the point is the
data path, not the optimiser. Torch is used for the tensors when it is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
import pyarrow as pa
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

TASK_QUEUE = "ratchet-cpu"  # the trajectory workflow's task queue
NO_BATCH_EXIT = 3  # `ratchet consume` exit status when no batch was ready in time


@dataclass
class Problem:
    qid: str
    problem: str
    gold: list[str]


def load_problems(path: Path, limit: int) -> list[Problem]:
    """GSM8K rows (question, answer with '#### n') and MATH rows (problem, answer)."""
    problems: list[Problem] = []
    for line_no, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if "question" in row:
            gold = row["answer"].split("####")[-1].strip().replace(",", "")
            problems.append(Problem(row.get("id", f"{path.stem}-{line_no}"), row["question"].strip(), [gold]))
        else:
            problems.append(Problem(row.get("unique_id", f"{path.stem}-{line_no}"), row["problem"].strip(), [str(row["answer"])]))
        if len(problems) == limit:
            break
    return problems


def trajectory_request(run: dict, problem: Problem, samples: int, sample: int, turns: int) -> dict:
    """The `trajectory` workflow's input (docs/trajectory-request.md). The id must be <groupId>/<sample>."""
    group_id = f"{run['runId']}/{problem.qid}"
    return {
        "trajectoryId": f"{group_id}/{sample}",
        "qid": problem.qid,
        "problem": problem.problem,
        "gold": problem.gold,
        "options": {"turns": turns},
        "group": {"run": run, "groupId": group_id, "size": samples, "sample": sample},
    }


async def submit(client: Client, run: dict, problems: list[Problem], samples: int, turns: int) -> int:
    started = 0
    for problem in problems:
        for sample in range(samples):
            request = trajectory_request(run, problem, samples, sample, turns)
            # Same id twice never runs twice: a resubmitted group attaches to the existing workflows.
            await client.start_workflow(
                "trajectory",
                request,
                id=request["trajectoryId"],
                task_queue=TASK_QUEUE,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
            started += 1
    return started


def ratchet(*args: str) -> subprocess.CompletedProcess[str]:
    command = shlex.split(os.environ.get("RATCHET_CLI", "npx ratchet")) + list(args)
    return subprocess.run(command, capture_output=True, text=True, check=False)


def list_column(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Packed values and per-row offsets of a list column, both views of the Arrow buffers (no copy)."""
    column = table.column(name)
    assert column.num_chunks == 1, "a consumed batch is one record batch"
    chunk = column.chunk(0)
    values = chunk.values.to_numpy(zero_copy_only=True)
    offsets = chunk.offsets.to_numpy(zero_copy_only=True)
    return values, offsets


def train_step(table: pa.Table) -> dict:
    """Builds the step's tensors and a GRPO-style objective from one batch."""
    input_ids, offsets = list_column(table, "packed_input_ids")
    logprobs, logprob_offsets = list_column(table, "packed_logprobs")
    prompt_mask, _ = list_column(table, "prompt_mask")
    seqlens, seqlen_offsets = list_column(table, "seqlens")
    rewards, reward_offsets = list_column(table, "rewards")
    assert input_ids.dtype == np.int32 and logprobs.dtype == np.float32 and prompt_mask.dtype == np.int8
    assert not input_ids.flags.owndata and not logprobs.flags.owndata, "columns must be views, not copies"
    # A sequence of L tokens has L - 1 logprobs: token j's is at j - 1 (the first token has none).
    assert np.array_equal(np.diff(logprob_offsets), np.diff(offsets) - np.diff(seqlen_offsets)), "L - 1 logprobs per sequence"

    # GRPO: a trajectory's return (its first turn's return-to-go) against its group's mean and spread.
    returns = rewards[reward_offsets[:-1]]
    groups = np.array(table.column("group_id").to_pylist())
    advantages = np.zeros_like(returns)
    for group in np.unique(groups):
        members = groups == group
        advantages[members] = (returns[members] - returns[members].mean()) / (returns[members].std() + 1e-6)

    # Padded [rows, longest] tensors: token ids, the loss mask (generated tokens only), the behaviour policy's
    # logprob of each token, and per-token advantages.
    lengths = np.diff(offsets)
    rows, width = len(lengths), int(lengths.max())
    ids = np.zeros((rows, width), dtype=np.int32)
    loss_mask = np.zeros((rows, width), dtype=np.float32)
    old_logprobs = np.zeros((rows, width), dtype=np.float32)
    for row in range(rows):
        start, end = offsets[row], offsets[row + 1]
        ids[row, : end - start] = input_ids[start:end]
        loss_mask[row, : end - start] = 1 - prompt_mask[start:end]
        position, logprob = 0, logprob_offsets[row]
        for length in seqlens[seqlen_offsets[row] : seqlen_offsets[row + 1]]:
            old_logprobs[row, position + 1 : position + length] = logprobs[logprob : logprob + length - 1]
            position, logprob = position + length, logprob + length - 1
    token_advantages = advantages[:, None] * loss_mask
    tensors = {"input_ids": ids, "loss_mask": loss_mask, "old_logprobs": old_logprobs, "advantages": token_advantages}
    try:
        import torch  # optional: the same arrays as torch tensors, sharing memory

        tensors = {name: torch.from_numpy(array) for name, array in tensors.items()}
        objective = float((tensors["advantages"] * tensors["old_logprobs"]).sum() / tensors["loss_mask"].sum())
    except ImportError:
        objective = float((token_advantages * old_logprobs).sum() / loss_mask.sum())
    return {
        "rows": rows,
        "tokens": int(offsets[-1]),
        "generated_tokens": int(loss_mask.sum()),
        "mean_return": float(returns.mean()),
        "objective": objective,
        "shape": [rows, width],
    }


def publish_version(database_url: str, version: int) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("SELECT ratchet_publish_policy_version(%s, %s)", (version, f"/checkpoints/step-{version}"))


def current_version(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        return connection.execute("SELECT coalesce(max(version), 0) FROM policy_versions").fetchone()[0]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=Path(__file__).resolve().parents[2] / "data" / "sample.jsonl")
    parser.add_argument("--run", default="python-example")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--samples", type=int, default=2, help="n: samples per prompt (the group size)")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=2, help="groups per training step")
    parser.add_argument("--max-head-offpolicyness", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    temporal_address = os.environ.get("TEMPORAL_ADDRESS", "localhost:7233")
    database_url = os.environ["DATABASE_URL"]
    run = {
        "runId": args.run,
        "maxHeadOffpolicyness": args.max_head_offpolicyness,
        "batchSize": args.batch_size,
        "maxConcurrent": args.batch_size * 2,
    }

    client = await Client.connect(temporal_address, namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    problems = load_problems(args.dataset, args.prompts)
    started = await submit(client, run, problems, args.samples, args.turns)
    print(json.dumps({"event": "submitted", "groups": len(problems), "trajectories": started}), flush=True)

    seen_groups: set[str] = set()
    version = current_version(database_url)
    with tempfile.TemporaryDirectory() as scratch:
        for step in range(args.steps):
            path = Path(scratch) / f"batch-{step}.arrow"
            consumed = ratchet("consume", "--run", args.run, "--batch-size", str(args.batch_size),
                               "--format", "arrow", "--out", str(path), "--wait", "120", "--lease", "120",
                               "--consumer", f"python-trainer:{os.getpid()}")
            if consumed.returncode == NO_BATCH_EXIT:
                print(consumed.stderr, file=sys.stderr)
                return 1
            if consumed.returncode != 0:
                raise RuntimeError(f"ratchet consume failed: {consumed.stderr}")
            batch = json.loads(consumed.stdout.strip().splitlines()[-1])

            with pa.memory_map(str(path)) as source:
                table = pa.ipc.open_file(source).read_all()
                repeated = seen_groups.intersection(batch["groupIds"])
                assert not repeated, f"groups handed out twice: {repeated}"
                seen_groups.update(batch["groupIds"])
                metrics = train_step(table)

            version += 1
            publish_version(database_url, version)
            acked = ratchet("ack", batch["batchId"])
            if acked.returncode != 0:
                raise RuntimeError(f"ratchet ack failed: {acked.stderr}")
            print(json.dumps({"event": "step", "step": step, "batchId": batch["batchId"], "groups": batch["groups"],
                              "stale": batch["staleTrajectories"], "policyVersion": version, **metrics}), flush=True)

    print(json.dumps({"event": "done", "steps": args.steps, "groups": len(seen_groups), "policyVersion": version}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

"""A GRPO-shaped trainer loop on Ratchet, in Python, with the `ratchet_rollouts` package (`pip install ./python`).

A trainer has three touch points with Ratchet, all in the package, none through Node:

1. Submit: each prompt becomes a group of n samples in a training run whose staleness bound
   (max_head_offpolicyness, batch size, max concurrent) travels with every request.
2. Consume: the oldest finished groups arrive as one leased batch, read from Postgres' packed columns into Arrow;
   its columns are numpy views (no copy). The batch is acknowledged only after the step, so a trainer that dies
   mid-step gets its batch re-delivered to whoever consumes next, once the lease runs out.
3. Publish: after each step, the new policy version goes into Postgres; GPU workers load it and admission lets
   more groups start.

The "training" is a stand-in (GRPO advantages and a token-weighted objective in numpy): the point is the data path,
not the optimiser. Torch is used for the tensors when it is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

import numpy as np

from ratchet_rollouts import Batch, RolloutClient, RunConfig, exit_process, load_problems


def train_step(batch: Batch) -> dict[str, object]:
    """Builds the step's padded arrays (ids, loss mask, old logprobs, GRPO advantages) and a stand-in objective."""
    columns = batch.to_numpy()
    ids, logprobs, seqlens = columns["packed_input_ids"], columns["packed_logprobs"], columns["seqlens"]
    assert not ids.values.flags.owndata and not logprobs.values.flags.owndata, "columns must be views, not copies"
    # A sequence of L tokens has L - 1 logprobs: token j's is at j - 1 (the first token has none).
    assert np.array_equal(np.diff(logprobs.offsets), np.diff(ids.offsets) - np.diff(seqlens.offsets)), "L - 1 logprobs per sequence"
    arrays = batch.to_arrays()
    try:
        import torch  # optional: the same arrays as torch tensors, sharing memory

        tensors = batch.to_torch()
        objective = float((tensors["advantages"] * tensors["old_logprobs"]).sum() / tensors["loss_mask"].sum())
    except ImportError:
        objective = float((arrays["advantages"] * arrays["old_logprobs"]).sum() / arrays["loss_mask"].sum())
    rewards = columns["rewards"]
    return {
        "rows": int(arrays["input_ids"].shape[0]),
        "tokens": int(ids.offsets[-1]),
        "generated_tokens": int(arrays["loss_mask"].sum()),
        "mean_return": float(rewards.values[rewards.offsets[:-1]].mean()),
        "objective": objective,
        "shape": list(arrays["input_ids"].shape),
    }


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

    run = RunConfig(run_id=args.run, max_head_offpolicyness=args.max_head_offpolicyness, batch_size=args.batch_size, max_concurrent=args.batch_size * 2)
    async with await RolloutClient.connect() as client:  # TEMPORAL_ADDRESS, DATABASE_URL, TLS: see the README
        problems = load_problems(args.dataset, limit=args.prompts)
        groups = await client.submit(run, problems, samples=args.samples, rollout={"turns": args.turns})
        print(json.dumps({"event": "submitted", "groups": len(groups), "trajectories": sum(len(g.trajectory_ids) for g in groups)}), flush=True)

        seen_groups: set[str] = set()
        version = await client.policy_version()
        step = 0
        async for batch in client.batches(args.run, batch_size=args.batch_size, lease_s=120, wait_s=120, consumer=f"python-trainer:{os.getpid()}"):
            repeated = seen_groups.intersection(batch.group_ids)
            assert not repeated, f"groups handed out twice: {repeated}"
            seen_groups.update(batch.group_ids)
            metrics = train_step(batch)
            version += 1
            await client.publish_policy_version(version, weights_path=f"/checkpoints/step-{version}")
            await client.ack(batch.batch_id)
            print(json.dumps({"event": "step", "step": step, "batchId": batch.batch_id, "groups": len(batch.group_ids),
                              "stale": batch.stale_trajectories, "policyVersion": version, **metrics}), flush=True)
            step += 1
            if step == args.steps:
                break

    print(json.dumps({"event": "done", "steps": args.steps, "groups": len(seen_groups), "policyVersion": version}), flush=True)
    return 0


if __name__ == "__main__":
    # Not sys.exit: the Temporal SDK's runtime threads can abort the interpreter's finalization (exit_process's note).
    exit_process(asyncio.run(main()))

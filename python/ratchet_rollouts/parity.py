"""Training-inference parity: recompute the logprob of every generated token of exported trajectories under the
policy version that sampled it, at the row's own sampling, and compare with the stored behaviour logprobs.

`parity_stats` (parity_report.py) is pure numpy; `processed_logprobs`, `check_parity` and the `ratchet-parity`
command need the `[torch]` extra (torch, transformers, safetensors), imported when called. See
docs/behaviour-logprobs.md.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from .parity_report import RATIO_BAND, CheckedTokens, ParityReport, ParityStats, parity_report, parity_stats, sampling_label
from .parity_rows import GeneratedTokens, generated_tokens, row_sampling, rows_of

if TYPE_CHECKING:
    import pyarrow as pa
    import torch

    from .batch import Batch

__all__ = ["RATIO_BAND", "ModelSource", "ParityReport", "ParityStats", "check_parity", "parity_stats", "processed_logprobs"]

# vLLM's sampler (vllm/sampling_params.py, v1/sample/sampler.py): below this temperature is greedy decoding, and a
# temperature between it and _MAX_TEMP is raised to _MAX_TEMP.
_SAMPLING_EPS = 1e-5
_MAX_TEMP = 1e-2
# Logit rows per softmax: each is a vocabulary wide (151,936 floats for Qwen3), and top-p sorts it.
_ROWS_PER_CHUNK = 64

ModelSource = Union[str, Path, "torch.nn.Module"]


def processed_logprobs(
    logits: torch.Tensor,
    temperature: float,
    top_k: int,
    top_p: float,
    min_p: float,
    *,
    repetition_penalty: float = 1.0,
    seen: torch.Tensor | None = None,
) -> torch.Tensor:
    """Log-softmax of the distribution vLLM samples from, for [rows, vocab] logits: its sampler's order and float32
    arithmetic (repetition penalty, temperature, min-p, top-k, top-p). top_k -1 or 0 is off. A repetition penalty
    other than 1 needs `seen`, a [rows, vocab] bool mask of the tokens in each row's prompt and output so far.
    Tokens the sampling cannot draw get -inf."""
    import torch

    f32 = torch.float32
    logits = logits.to(f32)
    if repetition_penalty != 1.0:
        if seen is None:
            raise ValueError("processed_logprobs: a repetition penalty needs `seen` (the tokens of each row's prompt and output so far)")
        penalties = torch.where(seen, torch.tensor(repetition_penalty, dtype=f32), torch.tensor(1.0, dtype=f32))
        logits = logits * torch.where(logits > 0, 1.0 / penalties, penalties)
    if temperature < _SAMPLING_EPS:
        # Greedy: vLLM resets top-p, top-k and min-p and returns the penalised distribution's logprobs.
        return logits.log_softmax(-1)
    logits = logits / torch.tensor(max(temperature, _MAX_TEMP), dtype=f32)
    if min_p > 0:
        probs = logits.softmax(-1)
        threshold = probs.amax(-1, keepdim=True) * torch.tensor(min_p, dtype=f32)
        logits = logits.masked_fill(probs < threshold, float("-inf"))
    vocab = logits.shape[-1]
    if 0 < top_k < vocab:
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1:
        ascending, order = logits.sort(-1)
        cut = ascending.softmax(-1).cumsum(-1) <= 1 - torch.tensor(top_p, dtype=f32)
        cut[..., -1] = False  # at least one token
        logits = logits.scatter(-1, order, ascending.masked_fill(cut, float("-inf")))
    return logits.log_softmax(-1)

def check_parity(
    model: ModelSource | Mapping[int, ModelSource],
    rows: str | Path | Batch | pa.Table | Iterable[Mapping[str, Any]],
    *,
    device: str = "cpu",
) -> ParityReport:
    """Recomputes every generated token's logprob in float32 under the policy version that sampled it, at its row's
    sampling, and compares with the stored one. `model`: one model (a directory, or a loaded module) for every
    version, or a mapping from policy version to model; tokens of a version with no model are counted, not checked.
    `rows`: an export file (JSON lines, Parquet, Arrow), a consumed `Batch`, an Arrow table or row mappings."""
    sequences: list[GeneratedTokens] = []
    row_count = rows_without_sampling = 0
    for row in rows_of(rows):
        row_count += 1
        sampling = row_sampling(row)
        if sampling is None:
            rows_without_sampling += int(len(row.get("packed_logprobs") or []) > 0)
            continue
        sequences.extend(generated_tokens(row, sampling))
    by_model: Mapping[int, ModelSource] | None = model if isinstance(model, Mapping) else None
    versions = sorted({int(v) for s in sequences for v in np.unique(s.versions)})
    checked: list[CheckedTokens] = []
    unchecked: dict[int, int] = {}
    for version in versions:
        source = model if by_model is None else by_model.get(version)
        if source is None:
            unchecked[version] = sum(int((s.versions == version).sum()) for s in sequences)
            continue
        net = _load(source, device)  # one version's weights at a time
        for tokens in sequences:
            picked = tokens.versions == version
            if picked.any():
                at_sampling, raw = _recompute(net, tokens, tokens.positions[picked], device)
                checked.append(CheckedTokens(version, sampling_label(tokens.sampling), tokens.stored[picked], at_sampling, raw))
        del net
    return parity_report(checked, row_count, unchecked, rows_without_sampling)


def _load(source: ModelSource, device: str) -> Any:
    import torch

    if isinstance(source, torch.nn.Module):
        return source
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(source), dtype=torch.float32).to(device).eval()


def _recompute(net: Any, tokens: GeneratedTokens, positions: np.ndarray, device: str) -> tuple[np.ndarray, np.ndarray]:
    """The logprobs of the tokens at `positions` (each predicted from the logits one position before) at the row's
    sampling and under the raw distribution."""
    import torch

    ids = torch.as_tensor(tokens.input_ids, dtype=torch.long, device=device)
    first = int(positions.min()) - 1
    keep = len(ids) - first  # only the logits rows that predict a checked token, and those after
    with torch.inference_mode():
        if "logits_to_keep" in inspect.signature(net.forward).parameters:
            logits = net(input_ids=ids[None], logits_to_keep=keep).logits[0, -keep:]
        else:
            logits = net(input_ids=ids[None]).logits[0, first:]
        sampling = tokens.sampling
        first_seen = None
        if sampling.repetition_penalty != 1.0:
            # vLLM penalises every token of the request's prompt and output so far: the sequence before the token.
            first_seen = torch.full((logits.shape[-1],), len(ids), dtype=torch.long, device=device)
            first_seen.scatter_reduce_(0, ids, torch.arange(len(ids), device=device), reduce="amin")
        at_sampling, untempered = [], []
        for lo in range(0, len(positions), _ROWS_PER_CHUNK):
            at = torch.as_tensor(positions[lo : lo + _ROWS_PER_CHUNK], dtype=torch.long, device=device)
            rows, targets = logits[at - 1 - first].float(), ids[at][:, None]
            seen = None if first_seen is None else first_seen[None, :] < at[:, None]
            processed = processed_logprobs(rows, sampling.temperature, sampling.top_k, sampling.top_p, sampling.min_p, repetition_penalty=sampling.repetition_penalty, seen=seen)
            at_sampling.append(processed.gather(1, targets)[:, 0].double().cpu().numpy())
            untempered.append(rows.log_softmax(-1).gather(1, targets)[:, 0].double().cpu().numpy())
    return np.concatenate(at_sampling), np.concatenate(untempered)


if __name__ == "__main__":
    from .parity_cli import main

    sys.exit(main())

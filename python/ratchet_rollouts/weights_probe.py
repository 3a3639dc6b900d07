"""The reference a GPU worker proves a reload against: logprobs of a fixed token sequence under the published weights.

After loading a version, each GPU worker asks its server to score `probe_token_ids(vocab_size)` (vLLM
`prompt_logprobs`, SGLang `input_token_logprobs`) and compares the answer with this reference, computed by the
publisher from the weights it just saved. A checksum of the files would not do: a server can hold the right bytes and
serve from a stale copy derived from them (vLLM 0.32's CPU head of a tied model, see vllm_reload.py). Logprobs of the
whole sequence go through every layer and, through the softmax's normaliser, every row of the output head.

    python -m ratchet_rollouts.weights_probe WEIGHTS_DIR --out reference.json   # then
    ratchet policy publish --version N --weights WEIGHTS_DIR --reference reference.json

or, from a trainer holding the model in memory, `probe_reference(model)` passed to `publish_policy_version`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

PROBE_LENGTH = 48
# Token 0 of the sequence is a fixed, common one; the rest are spread over the vocabulary by a fixed LCG, so every
# version of every model is probed with the same ids.
_FIRST = 151643  # Qwen's <|endoftext|>; replaced below when the vocabulary is smaller
_LCG_A, _LCG_C, _LCG_M = 1103515245, 12345, 2**31


def probe_token_ids(vocab_size: int, length: int = PROBE_LENGTH) -> list[int]:
    """The probe's token ids for a model with this vocabulary (deterministic; the reference carries them to the worker)."""
    ids = [_FIRST if _FIRST < vocab_size else 0]
    state = 20261206
    while len(ids) < length:
        state = (_LCG_A * state + _LCG_C) % _LCG_M
        ids.append((state >> 8) % vocab_size)
    return ids


def probe_reference(model: Any, vocab_size: int | None = None, token_ids: list[int] | None = None) -> dict[str, Any]:
    """The reference for a transformers causal LM (in memory, as the trainer holds it): logprob of each probe token
    after the ones before it, the log-softmax taken in float32 over the model's logits (computed in its own dtype,
    from the weights the saved checkpoint holds). `token_ids` scores another sequence (a held-out check)."""
    import torch

    vocab = int(vocab_size or model.config.vocab_size)
    ids = token_ids if token_ids is not None else probe_token_ids(vocab)
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=model.device)).logits[0].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        scored = [float(logprobs[i - 1, ids[i]]) for i in range(1, len(ids))]
    if not all(math.isfinite(value) for value in scored):
        raise ValueError("the model gives non-finite logprobs for the probe sequence")
    return {"token_ids": ids, "logprobs": [None, *scored], "dtype": str(next(model.parameters()).dtype).removeprefix("torch.")}


def reference_from_directory(directory: str | Path, token_ids: list[int] | None = None, dtype: str = "auto") -> dict[str, Any]:
    """The reference for a saved checkpoint: loaded with transformers, in the dtype it was saved in (or `dtype`: the
    one the server computes in, e.g. float32 for a server started with --dtype float32)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=dtype)
    model.eval()
    return probe_reference(model, token_ids=token_ids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ratchet_rollouts.weights_probe", description=__doc__.split("\n")[0])
    parser.add_argument("weights", help="checkpoint directory (save_pretrained)")
    parser.add_argument("--out", help="file to write (default stdout)")
    parser.add_argument("--dtype", default="auto", help="compute dtype: auto (as saved), bfloat16 or float32 (as the server computes)")
    parser.add_argument("--ids", help="score this JSON list of token ids instead of the probe sequence (a held-out check)")
    args = parser.parse_args(argv)
    reference = json.dumps(reference_from_directory(args.weights, json.loads(args.ids) if args.ids else None, args.dtype))
    if args.out:
        Path(args.out).write_text(reference + "\n")
    else:
        sys.stdout.write(reference + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

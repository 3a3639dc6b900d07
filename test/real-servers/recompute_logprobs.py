"""Recomputes, with transformers in float32, the logprob of every generated token of exported trajectories (JSON lines
on stdin) under the same weights, at each row's own sampling and, for contrast, untempered. Prints one JSON object:
how far the stored logprobs are from each. Test-only: the real-server suite's check that stored logprobs are those
of the sampling distribution (the issue's parity command is a separate, shipped tool).

usage: recompute_logprobs.py MODEL_DIR < rows.jsonl
"""

import json
import sys

import torch
from transformers import AutoModelForCausalLM


def processed(logits: torch.Tensor, temperature: float, top_k: int, top_p: float, min_p: float) -> torch.Tensor:
    """log softmax after temperature, min-p, top-k and top-p, in vLLM's order (v1/sample/sampler.py)."""
    logits = logits / temperature
    if min_p > 0:
        probs = logits.softmax(-1)
        logits = logits.masked_fill(probs < min_p * probs.max(-1, keepdim=True).values, float("-inf"))
    if top_k != -1:
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1:
        ascending, order = logits.sort(-1)
        cut = ascending.softmax(-1).cumsum(-1) <= 1 - top_p
        cut[..., -1] = False
        logits = logits.scatter(-1, order, ascending.masked_fill(cut, float("-inf")))
    return logits.log_softmax(-1)


def main(model_dir: str) -> None:
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    sampled, untempered = [], []
    for line in sys.stdin:
        row = json.loads(line)
        assert row["repetition_penalty"] == 1, "the recomputation applies no repetition penalty"
        ids, mask, stored = row["packed_input_ids"], row["prompt_mask"], row["packed_logprobs"]
        start = logprob_start = 0
        for length in row["seqlens"]:
            sequence = torch.tensor([ids[start : start + length]])
            with torch.no_grad():
                logits = model(sequence).logits[0].float()
            at_sampling = processed(logits, row["temperature"], row["top_k"], row["top_p"], row["min_p"])
            plain = logits.log_softmax(-1)
            for j in range(1, length):
                if mask[start + j]:
                    continue
                token, value = ids[start + j], stored[logprob_start + j - 1]
                sampled.append(abs(value - at_sampling[j - 1, token].item()))
                untempered.append(abs(value - plain[j - 1, token].item()))
            start += length
            logprob_start += length - 1

    def summary(deltas: list[float]) -> dict[str, float]:
        ordered = sorted(deltas)
        return {"mean": sum(ordered) / len(ordered), "p99": ordered[int(0.99 * (len(ordered) - 1))], "max": ordered[-1]}

    print(json.dumps({"tokens": len(sampled), "at_sampling": summary(sampled), "untempered": summary(untempered)}))


if __name__ == "__main__":
    main(sys.argv[1])

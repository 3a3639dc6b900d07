"""ratchet_rollouts.parity.processed_logprobs against vLLM's own sampler (v1/sample/sampler.py, processed_logprobs
mode, on the CPU): the same logits through both, at each sampling Ratchet can send, must give the same logprobs
(and -inf for the same tokens). Run by test/real-servers/parity.real.ts with the vLLM virtualenv's python, where
torch and vllm are; prints one JSON object and exits 1 on a mismatch.

usage: processed_logprobs_check.py
"""

import json
import sys
from types import SimpleNamespace

import torch
from vllm.v1.sample.logits_processor import LogitsProcessors
from vllm.v1.sample.logits_processor.builtin import MinPLogitsProcessor
from vllm.v1.sample.logits_processor.interface import BatchUpdate
from vllm.v1.sample.metadata import SamplingMetadata
from vllm.v1.sample.sampler import Sampler

from ratchet_rollouts.parity import processed_logprobs

ROWS, VOCAB, PAD = 6, 2000, 2000
SAMPLINGS = [  # temperature, top_k, top_p, min_p, repetition_penalty
    (1.0, -1, 1.0, 0.0, 1.0),
    (0.7, -1, 1.0, 0.0, 1.0),
    (1.0, -1, 0.9, 0.0, 1.0),
    (1.0, 20, 1.0, 0.0, 1.0),
    (0.6, 50, 0.8, 0.0, 1.0),
    (1.3, -1, 1.0, 0.05, 1.0),
    (0.8, 40, 0.95, 0.02, 1.2),
    (1.0, -1, 1.0, 0.0, 0.8),
    (0.0, -1, 1.0, 0.0, 1.1),  # greedy: vLLM drops top-k, top-p and min-p
]


def vllm_logprobs(logits, prompts, outputs, temperature, top_k, top_p, min_p, penalty):
    min_p_processor = MinPLogitsProcessor(SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=ROWS)), torch.device("cpu"), False)
    added = [(i, SimpleNamespace(min_p=min_p), None, outputs[i]) for i in range(ROWS)]
    min_p_processor.update_state(BatchUpdate(batch_size=ROWS, removed=[], added=added, moved=[]))
    greedy = temperature < 1e-5
    metadata = SamplingMetadata(
        temperature=torch.full((ROWS,), temperature, dtype=torch.float32),
        all_greedy=greedy,
        all_random=not greedy,
        top_p=None if greedy or top_p >= 1 else torch.full((ROWS,), top_p, dtype=torch.float32),
        top_k=None if greedy or top_k <= 0 else torch.full((ROWS,), top_k, dtype=torch.int32),
        generators={},
        max_num_logprobs=-1,  # every token's logprob
        no_penalties=penalty == 1.0,
        prompt_token_ids=torch.nn.utils.rnn.pad_sequence([torch.tensor(p) for p in prompts], batch_first=True, padding_value=PAD),
        frequency_penalties=torch.zeros(ROWS),
        presence_penalties=torch.zeros(ROWS),
        repetition_penalties=torch.full((ROWS,), penalty, dtype=torch.float32),
        output_token_ids=outputs,
        allowed_token_ids_mask=None,
        bad_words_token_ids={},
        logitsprocs=LogitsProcessors([] if greedy else [min_p_processor]),
    )
    return Sampler(logprobs_mode="processed_logprobs")(logits.clone(), metadata).logprobs_tensors.logprobs


def main() -> None:
    generator = torch.Generator().manual_seed(22)
    worst, mismatches = 0.0, []
    for sampling in SAMPLINGS:
        logits = torch.randn(ROWS, VOCAB, generator=generator) * 4
        prompts = [torch.randint(0, VOCAB, (30,), generator=generator).tolist() for _ in range(ROWS)]
        outputs = [torch.randint(0, VOCAB, (i * 3,), generator=generator).tolist() for i in range(ROWS)]
        seen = torch.zeros(ROWS, VOCAB, dtype=torch.bool)
        for i in range(ROWS):
            seen[i, prompts[i] + outputs[i]] = True
        expected = vllm_logprobs(logits, prompts, outputs, *sampling)
        temperature, top_k, top_p, min_p, penalty = sampling
        actual = processed_logprobs(logits.clone(), temperature, top_k, top_p, min_p, repetition_penalty=penalty, seen=seen)
        same_support = torch.equal(torch.isinf(expected), torch.isinf(actual))
        finite = torch.isfinite(expected)
        gap = float((expected[finite] - actual[finite]).abs().max())
        worst = max(worst, gap)
        if not same_support or gap > 1e-5:
            mismatches.append({"sampling": sampling, "same_support": same_support, "max_abs": gap})
    print(json.dumps({"samplings": len(SAMPLINGS), "max_abs": worst, "mismatches": mismatches}))
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()

"""Write a tiny random-weight Qwen3 model with the real Qwen3 vocabulary, deterministically from a seed.

No weights can be downloaded in CI, but vLLM only needs an architecture it knows, a tokenizer and weights:
a 2-layer Qwen3 with the real 151,936-token vocabulary serves real token ids and real logprobs
(about ln(1/151936) = -11.9, since the weights are random). Two seeds give two policy versions to reload.
head_dim stays 64: vLLM's CPU attention kernel on AVX2 rejects 16.

With --peaked the model gets its own output head, scaled so the next-token distribution is concentrated (entropy
about 6 nats instead of 11.9): there temperature and top-p change a sampled token's logprob by most of a nat, which
the parity check (ratchet-parity) needs to tell the sampled distribution from the raw one. The head is untied
because a tied one, scaled, would mostly repeat the current token.

usage: make_tiny_model.py TOKENIZER_DIR OUT_DIR SEED [--peaked]
"""

import shutil
import sys
from pathlib import Path

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

PEAKED_LOGIT_SCALE = 16.0  # logits' std from about 0.23 to 3.6
IM_END = 151645  # <|im_end|>: the chat template's end of turn, Qwen3's eos
ENDOFTEXT = 151643  # <|endoftext|>: Qwen3's pad and bos


def tiny_config(tie_word_embeddings: bool = True) -> Qwen3Config:
    return Qwen3Config(
        vocab_size=151936,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=32768,
        tie_word_embeddings=tie_word_embeddings,
        bos_token_id=ENDOFTEXT,
        eos_token_id=IM_END,
        pad_token_id=ENDOFTEXT,
        torch_dtype="bfloat16",
    )


def main(tokenizer_dir: Path, out_dir: Path, seed: int, peaked: bool) -> None:
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(tiny_config(tie_word_embeddings=not peaked))
    if peaked:
        with torch.no_grad():
            model.lm_head.weight.mul_(PEAKED_LOGIT_SCALE)
    model = model.to(torch.bfloat16)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    # vLLM takes its default sampling parameters from generation_config.json; the model has none to offer.
    (out_dir / "generation_config.json").unlink(missing_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(tokenizer_dir / name, out_dir / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:] == ["--peaked"])

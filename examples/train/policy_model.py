"""The policy: a tiny Qwen3 (2 layers, hidden 128, the real 151,936-token vocabulary) in float32, saved as a directory
vLLM can load and reload (config.json, model.safetensors, the tokenizer). The shape of
scripts/vllm/make_tiny_model.py (head_dim 64, which vLLM's CPU kernels take). `prepare --tied` ties the input and
output embeddings as Qwen3-0.6B to 4B have them: vLLM's own in-place `reload_weights` serves such a model as a hybrid
on CPU (the new body with the start-up head: see python/ratchet_rollouts/vllm_reload.py), Ratchet's worker extension
reloads it whole, and every version is published with a probe reference its GPU worker proves the reload against.
Untied is the default because it learns the demo's task in 40 steps and the tied one does not yet: after the same
80-step warm-up the tied model answers 11% of first turns right against 35-44% (measured, examples/train/README.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

IM_END = 151645  # <|im_end|>: the chat template's end of turn, Qwen3's eos
ENDOFTEXT = 151643  # <|endoftext|>: Qwen3's pad and bos
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def tiny_config(tied: bool = False) -> Qwen3Config:
    return Qwen3Config(
        vocab_size=151936, hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=64, max_position_embeddings=32768, tie_word_embeddings=tied,
        bos_token_id=ENDOFTEXT, eos_token_id=IM_END, pad_token_id=ENDOFTEXT, torch_dtype="float32",
    )


def new_policy(seed: int, tied: bool = False) -> Qwen3ForCausalLM:
    torch.manual_seed(seed)
    # Eager attention: the trainer's recomputation should do the arithmetic vLLM's does, not a fused approximation.
    return Qwen3ForCausalLM._from_config(tiny_config(tied), attn_implementation="eager").float()


def load_policy(directory: Path) -> Qwen3ForCausalLM:
    return Qwen3ForCausalLM.from_pretrained(directory, attn_implementation="eager", dtype=torch.float32)


def save_policy(model: Qwen3ForCausalLM, directory: Path, tokenizer_dir: Path) -> Path:
    """One version's directory: what vLLM serves at start-up and what `reload_weights` reads mid-run."""
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial, safe_serialization=True)
    # vLLM takes default sampling parameters from generation_config.json; Ratchet sends every one explicitly anyway.
    (partial / "generation_config.json").unlink(missing_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(tokenizer_dir / name, partial / name)
    shutil.rmtree(directory, ignore_errors=True)
    partial.rename(directory)  # whole or absent: a GPU worker never reads a half-written version
    return directory

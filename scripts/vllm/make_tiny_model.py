"""Write a tiny random-weight Qwen3 model with the real Qwen3 vocabulary, deterministically from a seed.

No weights can be downloaded in CI, but vLLM only needs an architecture it knows, a tokenizer and weights:
a 2-layer Qwen3 with the real 151,936-token vocabulary serves real token ids and real logprobs
(about ln(1/151936) = -11.9, since the weights are random). Two seeds give two policy versions to reload.
head_dim stays 64: vLLM's CPU attention kernel on AVX2 rejects 16.

With --peaked the model gets its own output head, scaled so the next-token distribution is concentrated (entropy
about 6 nats instead of 11.9): there temperature and top-p change a sampled token's logprob by most of a nat, which
the parity check (ratchet-parity) needs to tell the sampled distribution from the raw one. The head is untied
because a tied one, scaled, would mostly repeat the current token.

With --tool-caller the model is written by hand, not drawn (the seed only fills weights whose output is zeroed):
every layer's attention o_proj and MLP down_proj are zero, so the last hidden state is the normed embedding of the
current token alone and the model is a first-order Markov chain over tokens that lm_head spells out. From the
generation prompt's last token (the `\n` after `<|im_start|>assistant`) it writes a Hermes tool call in compact JSON,
each token with a successor of its own (Qwen3's canonical spacing repeats `\n`, `":` and ` "`, which no bigram can):

    <tool_call>{"name":"roll[_die]","arguments":{"sides":6|12|10}}</tool_call><|im_end|>

Three branches (`roll` or `roll_die`; `6` or `1`; after `1`, `2` or `0`) make real choices, each a valid call, with
the probabilities at temperature 0.7 given in TOOL_CHAIN; every other token of the vocabulary sits TOOL_BACKGROUND
nats below a state's likeliest successor, so that successor has about 0.9 of the raw distribution but over 0.9997 of
the T = 0.7 one: top-p 0.95 keeps only the call's tokens, and every call the model can sample is well-formed.

usage: make_tiny_model.py TOKENIZER_DIR OUT_DIR SEED [--peaked | --tool-caller]
"""

import math
import shutil
import sys
from pathlib import Path

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

PEAKED_LOGIT_SCALE = 16.0  # logits' std from about 0.23 to 3.6
IM_END = 151645  # <|im_end|>: the chat template's end of turn, Qwen3's eos
ENDOFTEXT = 151643  # <|endoftext|>: Qwen3's pad and bos

# The tool caller's chain, token ids of the Qwen3 vocabulary: each state's successors with their probability at
# temperature TOOL_TEMPERATURE. A token that is no state has a zero embedding, so flat logits after it.
NEWLINE = 198  # "\n": the generation prompt's last token
TOOL_CALL, TOOL_CALL_END = 151657, 151658  # <tool_call>, </tool_call>
TOOL_CHAIN: dict[int, dict[int, float]] = {
    NEWLINE: {TOOL_CALL: 1.0},
    TOOL_CALL: {4913: 1.0},  # '{"'
    4913: {606: 1.0},  # 'name'
    606: {3252: 1.0},  # '":"'
    3252: {1100: 1.0},  # 'roll'
    1100: {2198: 0.7, 61588: 0.3},  # '","' or '_die'
    61588: {2198: 1.0},  # '_die' -> '","'
    2198: {16370: 1.0},  # 'arguments'
    16370: {22317: 1.0},  # '":{"'
    22317: {82: 1.0},  # 's'
    82: {3341: 1.0},  # 'ides'
    3341: {788: 1.0},  # '":'
    788: {21: 0.6, 16: 0.4},  # '6' or '1'
    16: {17: 0.5, 15: 0.5},  # '2' or '0' after '1'
    21: {3417: 1.0},  # '6' -> '}}'
    17: {3417: 1.0},  # '2' -> '}}'
    15: {3417: 1.0},  # '0' -> '}}'
    3417: {TOOL_CALL_END: 1.0},
    TOOL_CALL_END: {IM_END: 1.0},
}
TOOL_TEMPERATURE = 0.7
# A GPU worker's start-up probe (src/policy/logprob-probe.ts) reads the token after "The capital of France is" and
# "1 + 1 =": a flat distribution there would tell it nothing about the server's logprobs, so those two last tokens
# (" is", " =") get eight successors each, logits 0.5 apart.
PROBE_CHAIN: dict[int, list[int]] = {
    374: [12095, 264, 279, 537, 7407, 3881, 825, 1083],  # " Paris", " a", " the", " not", " located", …
    284: [220, 1378, 825, 264, 279, 537, 1083, 3881],  # " ", " two", " one", " a", " the", …
}
PROBE_LOGIT_STEP = 0.5
# Every token off the chain, below a state's likeliest successor: about 0.1 of the raw (T = 1) distribution,
# 151,935 * exp(-14.1 / 0.7) = 3e-4 of the T = 0.7 one.
TOOL_BACKGROUND = 14.1


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


def write_tool_caller(model: Qwen3ForCausalLM) -> None:
    """The chain above in the weights: state i's embedding is unit vector i, lm_head's column i its successors' logits."""
    hidden = model.config.hidden_size
    assert len(TOOL_CHAIN) + len(PROBE_CHAIN) <= hidden and not TOOL_CHAIN.keys() & PROBE_CHAIN.keys()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.model.embed_tokens.weight.zero_()
        model.lm_head.weight.zero_()
        # RMSNorm (weight 1) scales a unit vector to sqrt(hidden): lm_head's entries are logits over that.
        scale = hidden**0.5
        for dim, (state, successors) in enumerate(TOOL_CHAIN.items()):
            model.model.embed_tokens.weight[state, dim] = 1.0
            top = max(successors.values())
            model.lm_head.weight[:, dim] = -TOOL_BACKGROUND / scale
            for token, probability in successors.items():
                logit = TOOL_TEMPERATURE * math.log(probability / top)
                model.lm_head.weight[token, dim] = logit / scale
        for dim, (state, successors) in enumerate(PROBE_CHAIN.items(), start=len(TOOL_CHAIN)):
            model.model.embed_tokens.weight[state, dim] = 1.0
            model.lm_head.weight[:, dim] = -TOOL_BACKGROUND / scale
            for rank, token in enumerate(successors):
                model.lm_head.weight[token, dim] = -PROBE_LOGIT_STEP * rank / scale


def main(tokenizer_dir: Path, out_dir: Path, seed: int, mode: str | None) -> None:
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(tiny_config(tie_word_embeddings=mode is None))
    if mode == "--peaked":
        with torch.no_grad():
            model.lm_head.weight.mul_(PEAKED_LOGIT_SCALE)
    elif mode == "--tool-caller":
        write_tool_caller(model)
    elif mode is not None:
        raise SystemExit(f"unknown mode {mode}: --peaked or --tool-caller")
    model = model.to(torch.bfloat16)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    # vLLM takes its default sampling parameters from generation_config.json; the model has none to offer.
    (out_dir / "generation_config.json").unlink(missing_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(tokenizer_dir / name, out_dir / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)

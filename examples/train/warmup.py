"""The supervised warm-up: a few steps of cross-entropy on the answer format, `<digit><|im_end|>`, in the contexts
Ratchet will generate in (the first turn's prompt, and a second turn after a wrong answer and its feedback)."""

from __future__ import annotations

import random
from pathlib import Path

import torch
from ratchet_rollouts import Problem
from transformers import AutoTokenizer, Qwen3ForCausalLM

from policy_model import IM_END

MATH_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."  # src/tokens/math-prompt.ts
FEEDBACK_WRONG = "Unfortunately your answer is wrong. Let's try again."


def contexts(tokenizer_dir: Path, problems: list[Problem]) -> list[tuple[list[int], list[int]]]:
    """(context, target) pairs: each problem's first-turn prompt, and a second turn after a wrong first answer."""
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    digit = {d: tokenizer.encode(str(d)) for d in range(10)}
    pairs = []
    for problem in problems:
        messages = [{"role": "user", "content": f"{problem.problem.strip()}\n{MATH_INSTRUCTION}"}]
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        first = tokenizer.encode(prompt)
        gold = digit[int(problem.gold[0])] + [IM_END]
        wrong = digit[(int(problem.gold[0]) + 1) % 10] + [IM_END]
        second = first + wrong + tokenizer.encode(f"\n<|im_start|>user\n{FEEDBACK_WRONG}<|im_end|>\n<|im_start|>assistant\n")
        pairs += [(first, gold), (second, gold)]
    return pairs


def warm_up(model: Qwen3ForCausalLM, tokenizer_dir: Path, problems: list[Problem], steps: int, seed: int, batch: int = 32, lr: float = 3e-3) -> dict[str, float]:
    """Returns the warm-up's last loss and the first-turn accuracy it ends at, greedy and sampled at T = 1."""
    rng = random.Random(seed)
    pairs = contexts(tokenizer_dir, problems)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss: torch.Tensor | None = None
    model.train()
    for _ in range(steps):
        chosen = [rng.choice(pairs) for _ in range(batch)]
        sequences = [context + target for context, target in chosen]
        width = max(len(s) for s in sequences)
        ids = torch.zeros((batch, width), dtype=torch.long)
        for i, s in enumerate(sequences):
            ids[i, : len(s)] = torch.tensor(s)
        hidden = model.model(input_ids=ids).last_hidden_state
        # Only the target tokens are scored, so the vocabulary projection runs at their positions alone.
        rows = [(i, len(c) - 1 + j, t) for i, (c, target) in enumerate(chosen) for j, t in enumerate(target)]
        logits = model.lm_head(hidden[[r[0] for r in rows], [r[1] for r in rows]])
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([r[2] for r in rows]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        firsts = pairs[0::2]
        correct, sampled = 0, 0.0
        for context, target in firsts:
            logits = model(input_ids=torch.tensor([context])).logits[0, -1]
            correct += int(int(logits.argmax()) == target[0])
            sampled += float(logits.softmax(-1)[target[0]])
    return {"warmup_steps": steps, "warmup_loss": None if loss is None else float(loss),
            "warmup_greedy_accuracy": correct / len(firsts), "warmup_sampled_accuracy": sampled / len(firsts)}

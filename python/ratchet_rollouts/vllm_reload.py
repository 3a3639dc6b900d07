"""A vLLM worker extension that reloads a checkpoint in place and leaves nothing of the old weights behind.

Start vLLM with `--worker-extension-cls ratchet_rollouts.vllm_reload.WeightReload` (and VLLM_SERVER_DEV_MODE=1); the
GPU worker then calls `POST /collective_rpc {"method": "ratchet_reload_weights", "kwargs": {"weights_path": DIR}}`
instead of vLLM's own `reload_weights`. Two things it adds, both found on vLLM 0.32:

1. **Tied heads.** vLLM's layerwise reload (model_loader/reload/layerwise.py) re-runs a layer's
   `process_weights_after_loading` only for layers that loaded a weight. With tied embeddings the checkpoint stores the
   shared matrix once, as `embed_tokens`; `lm_head` loads nothing ("ParallelLMHead: Failed to load weights") and gets
   its kernel tensors placed back. The shared tensor itself is updated, but on CPU the head multiplies through a copy
   derived from it at start-up (`dispatch_cpu_unquantized_gemm`: a oneDNN handle or a packed weight), which nothing
   rebuilds: the server then serves the new body with the old output head. Here every layer that shares a parameter
   with a layer that loaded it has its derived state rebuilt from the (new) shared tensor.
2. **A bad checkpoint never reaches the model.** The layerwise reload moves every layer to the meta device before it
   reads a byte; a checkpoint that fails half way (unreadable, truncated, another architecture or shape) leaves a model
   with no weights and the engine dies on the next step. Everything that can be checked without loading (the
   directory, config.json's architecture and sizes, every safetensors header, each file's length against its header,
   every tensor's name and shape against the served model) is checked first, and a failure raises before anything
   changes: the server keeps serving what it had.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

# config.json fields that must not change between two versions of one served model.
_SHAPE_FIELDS = (
    "architectures", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "tie_word_embeddings",
)


class CheckpointRefused(ValueError):
    """The checkpoint cannot be loaded into the served model; nothing was changed. vLLM passes only the message to
    the HTTP client, so it names the class: the GPU worker types the refusal by it."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"CheckpointRefused: {reason}")


def safetensors_headers(directory: Path) -> dict[str, tuple[list[int], str]]:
    """Every tensor of the directory's safetensors files: name → (shape, dtype). Checks that each file is as long
    as its header says (a truncated copy is refused here, not half way through a load)."""
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        raise CheckpointRefused(f"{directory}: no *.safetensors file")
    tensors: dict[str, tuple[list[int], str]] = {}
    for file in files:
        size = file.stat().st_size
        with file.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise CheckpointRefused(f"{file}: truncated ({size} bytes)")
            (header_len,) = struct.unpack("<Q", head)
            if header_len > min(size - 8, 100_000_000):
                raise CheckpointRefused(f"{file}: header of {header_len} bytes in a file of {size}")
            try:
                header = json.loads(handle.read(header_len))
            except ValueError as error:
                raise CheckpointRefused(f"{file}: unreadable header ({error})") from error
        end = 0
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            end = max(end, int(entry["data_offsets"][1]))
            tensors[name] = (list(entry["shape"]), str(entry["dtype"]))
        if 8 + header_len + end > size:
            raise CheckpointRefused(f"{file}: truncated: its header describes {8 + header_len + end} bytes, the file has {size}")
    return tensors


def check_checkpoint(directory: str, served_config: dict[str, Any], served_shapes: dict[str, list[int]]) -> None:
    """Raises CheckpointRefused unless `directory` holds a complete checkpoint of the served model's shape."""
    path = Path(directory)
    if not path.is_dir() or not os.access(path, os.R_OK | os.X_OK):
        raise CheckpointRefused(f"{directory}: not a readable directory")
    try:
        config = json.loads((path / "config.json").read_text())
    except (OSError, ValueError) as error:
        raise CheckpointRefused(f"{directory}/config.json: {error}") from error
    for field in _SHAPE_FIELDS:
        if field in served_config and config.get(field) != served_config[field]:
            raise CheckpointRefused(f"{directory}: config.json {field} is {config.get(field)!r}, the served model's is {served_config[field]!r}")
    tensors = safetensors_headers(path)
    for name, (shape, _dtype) in tensors.items():
        want = served_shapes.get(name)
        if want is not None and want != shape:
            raise CheckpointRefused(f"{directory}: {name} has shape {shape}, the served model's is {want}")
    missing = sorted(set(served_shapes) - set(tensors))
    if missing:
        raise CheckpointRefused(f"{directory}: no tensor {missing[0]} ({len(missing)} of the served model's tensors missing)")


class WeightReload:
    """Mixed into vLLM's worker by --worker-extension-cls: its methods are callable through /collective_rpc."""

    def ratchet_reload_weights(self, weights_path: str) -> dict[str, Any]:
        runner = self.model_runner  # type: ignore[attr-defined]
        model = runner.get_model()
        served_config = runner.vllm_config.model_config.hf_config.to_dict()
        check_checkpoint(weights_path, served_config, _checkpoint_shapes(weights_path_of(runner)))
        self.reload_weights(weights_path=weights_path)  # type: ignore[attr-defined]
        rebuilt = _rebuild_tied_layers(model)
        return {"weights_path": weights_path, "rebuilt": rebuilt}


def weights_path_of(runner: Any) -> str:
    return str(runner.vllm_config.model_config.model)


def _checkpoint_shapes(directory: str) -> dict[str, list[int]]:
    """The served checkpoint's own tensor shapes: what a new version must match (names as the checkpoint has them)."""
    try:
        return {name: shape for name, (shape, _dtype) in safetensors_headers(Path(directory)).items()}
    except (OSError, CheckpointRefused):
        return {}


def _rebuild_tied_layers(model: Any) -> list[str]:
    """Re-derives the kernel state of every layer whose parameter is another layer's too (a tied head): the reload
    updated the shared tensor through its owner, but not what this layer derived from it at start-up."""
    owners: dict[int, str] = {}
    rebuilt: list[str] = []
    for name, module in model.named_modules():
        tensors = list(module.named_parameters(recurse=False))
        if not tensors:
            continue
        shared = any(id(tensor) in owners for _, tensor in tensors)
        for _, tensor in tensors:
            owners.setdefault(id(tensor), name)
        method = getattr(module, "quant_method", None)
        if shared and method is not None and hasattr(method, "process_weights_after_loading"):
            method.process_weights_after_loading(module)
            rebuilt.append(name)
    return rebuilt

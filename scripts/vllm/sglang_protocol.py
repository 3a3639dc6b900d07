"""Print, as JSON, SGLang's own HTTP protocol definitions from the installed `sglang` package, read from source.

SGLang cannot serve on this machine (see README), and importing `sglang.srt.managers.io_struct` pulls in its whole
GPU dependency tree; parsing the source needs neither. The real-server suite checks the SGLang fake and the
backend against these fields, so the fake cannot drift from the real protocol.

Prints: the fields of GenerateReqInput, UpdateWeightFromDiskReqInput and AbortReq (with BaseReq's), the fields
of SamplingParams, and the keys TokenizerManager puts in a streamed output and its meta_info.
"""

import ast
import json
from importlib.util import find_spec
from pathlib import Path

ROOT = Path(find_spec("sglang").submodule_search_locations[0]) / "srt"


def class_fields(tree: ast.Module, name: str) -> list[str]:
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    for base in node.bases:
        if isinstance(base, ast.Name) and any(isinstance(n, ast.ClassDef) and n.name == base.id for n in tree.body):
            fields += class_fields(tree, base.id)
    return fields


def dict_keys_assigned(tree: ast.Module, variable: str) -> set[str]:
    """String keys of dict literals assigned to `variable` or passed to `variable.update`, and of `variable["key"] = ...`."""
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update":
            if isinstance(node.func.value, ast.Name) and node.func.value.id == variable and node.args and isinstance(node.args[0], ast.Dict):
                keys |= {k.value for k in node.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == variable and isinstance(node.value, ast.Dict):
                    keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == variable:
                    if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                        keys.add(target.slice.value)
    return keys


io_struct = ast.parse((ROOT / "managers" / "io_struct.py").read_text())
sampling = ast.parse((ROOT / "sampling" / "sampling_params.py").read_text())
tokenizer_manager = ast.parse((ROOT / "managers" / "tokenizer_manager.py").read_text())
print(json.dumps({
    "GenerateReqInput": class_fields(io_struct, "GenerateReqInput"),
    "UpdateWeightFromDiskReqInput": class_fields(io_struct, "UpdateWeightFromDiskReqInput"),
    "AbortReq": class_fields(io_struct, "AbortReq"),
    "SamplingParams": class_fields(sampling, "SamplingParams"),
    "output": sorted(dict_keys_assigned(tokenizer_manager, "out_dict")),
    "meta_info": sorted(dict_keys_assigned(tokenizer_manager, "meta_info")),
}))

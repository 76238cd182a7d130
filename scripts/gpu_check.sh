#!/usr/bin/env bash
# GPU check: a few consultations through the whole workflow DAG with an expert served by vLLM.
#
#   scripts/gpu_check.sh [MODEL_DIR]
#
# MODEL_DIR (or $LECODE_GPU_MODEL) is a local model directory in Hugging Face layout
# (config.json, tokenizer files, *.safetensors), e.g. a small instruction-tuned model such as
# Qwen2.5-0.5B-Instruct. GPU machines have no internet and there is no model hub: the weights
# must be brought along (copied next to the repository) and named here.
#
# What it does, in a copy of the project (the repository itself is not written to):
#   1. checks the machine (x86-64, nvidia-smi sees a GPU) and the model directory;
#   2. finds or creates the environments: the workflow's (.venv, from requirements.lock) and a
#      separate one for vLLM (.venv-gpu, from requirements-gpu.txt; vLLM pins its own torch and
#      cannot share the workflow's environment);
#   3. writes a configuration overlay: one expert {backend: vllm, model_path: MODEL_DIR,
#      strategy zero_shot}, the offline client and matcher, no judge, GPU_CHECK_CASES cases;
#   4. starts `vllm serve` through the workflow's launcher (`lecode serve start`, loopback only),
#      runs `snakemake all_tables`, and stops the server on every exit path;
#   5. checks the transcripts and writes a summary (stdout; $OUT if set).
#
# Environment (all optional):
#   LECODE_GPU_MODEL         model directory when no argument is given
#   LECODE_MAIN_VENV         workflow environment (default: <repo>/.venv)
#   LECODE_GPU_VENV          vLLM environment (default: <repo>/.venv-gpu)
#   LECODE_VLLM_COMMAND      command prefix that replaces `vllm serve` (default: the vLLM
#                            environment's `vllm serve`, else `vllm serve` on PATH)
#   LECODE_WHEELHOUSE        directory of wheels for offline installs (pip --no-index
#                            --find-links); prepare it where there is internet, e.g.
#                            pip download -r requirements-gpu.txt -d wheelhouse
#                              --only-binary=:all: --platform manylinux_2_28_x86_64
#                              --python-version 3.11
#   GPU_CHECK_CASES          consultations (default 5)
#   GPU_CHECK_MAX_TURNS      clarifying questions per consultation (default 3)
#   GPU_CHECK_SERVE_ARGS     extra `vllm serve` arguments (default: --enforce-eager)
#   GPU_CHECK_MEM_UTIL       --gpu-memory-utilization (default 0.85)
#   GPU_CHECK_SERVE_TIMEOUT  seconds for the server to become healthy (default 900)
#   GPU_CHECK_TIMEOUT        seconds for the DAG run (default 1800)
#   GPU_CHECK_INSTALL_TIMEOUT seconds for creating one environment (default 3600)
#   GPU_CHECK_WORKDIR        where the project copy runs (default: a new temporary directory)
#   OUT                      if set: summary (gpu_check_summary.{md,json}), tables, server log
#   GPU_CHECK_DRY=1          CPU dry run of the whole script: no GPU and no vLLM; the stand-in
#                            server (python tests/support/vllm_standin.py, test support
#                            outside the lecode package) plays `vllm serve`
#                            unless LECODE_VLLM_COMMAND names another command
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY="${GPU_CHECK_DRY:-0}"
CASES="${GPU_CHECK_CASES:-5}"
MAX_TURNS="${GPU_CHECK_MAX_TURNS:-3}"
SERVE_ARGS="${GPU_CHECK_SERVE_ARGS:---enforce-eager}"
MEM_UTIL="${GPU_CHECK_MEM_UTIL:-0.85}"
SERVE_TIMEOUT="${GPU_CHECK_SERVE_TIMEOUT:-900}"
DAG_TIMEOUT="${GPU_CHECK_TIMEOUT:-1800}"
INSTALL_TIMEOUT="${GPU_CHECK_INSTALL_TIMEOUT:-3600}"
MAIN_VENV="${LECODE_MAIN_VENV:-$ROOT/.venv}"
GPU_VENV="${LECODE_GPU_VENV:-$ROOT/.venv-gpu}"
WHEELHOUSE="${LECODE_WHEELHOUSE:-}"
ENTRY="gpu-expert"
STARTED=$(date +%s)

log() { printf '[gpu_check %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  printf '[gpu_check] ERROR: %s\n' "$*" >&2
  exit 1
}

command -v timeout >/dev/null 2>&1 || die "the 'timeout' command (coreutils) is required"

# -- 1. machine and model -------------------------------------------------------------------
if [ "$DRY" = 1 ]; then
  log "dry run: no GPU needed; the stand-in server plays 'vllm serve'"
else
  [ "$(uname -m)" = x86_64 ] || die "expected an x86-64 machine, found $(uname -m)"
  command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: is this a GPU machine with the NVIDIA driver?"
  GPU_INFO="$(timeout 60 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1)" ||
    die "nvidia-smi failed: $GPU_INFO"
  [ -n "$GPU_INFO" ] || die "nvidia-smi lists no GPU"
  log "GPU: $GPU_INFO"
fi

if [ -n "${GPU_CHECK_WORKDIR:-}" ]; then
  WORK="$GPU_CHECK_WORKDIR"
  mkdir -p "$WORK"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/lecode-gpu-check.XXXXXX")"
fi
WORK="$(cd "$WORK" && pwd)"
PROJECT="$WORK/project"
[ ! -e "$PROJECT" ] || die "$PROJECT exists; choose an empty GPU_CHECK_WORKDIR"

MODEL="${1:-${LECODE_GPU_MODEL:-}}"
if [ -z "$MODEL" ] && [ "$DRY" = 1 ]; then
  MODEL="$WORK/standin-model"
  mkdir -p "$MODEL"
  printf '{"model_type": "standin"}\n' >"$MODEL/config.json"
fi
[ -n "$MODEL" ] || die "no model: pass a local model directory (scripts/gpu_check.sh /models/NAME) or set LECODE_GPU_MODEL. There is no model hub on GPU machines: bring the weights along."
[ -d "$MODEL" ] || die "model directory $MODEL does not exist (the weights must be brought to this machine)"
MODEL="$(cd "$MODEL" && pwd)"
[ -f "$MODEL/config.json" ] || die "$MODEL has no config.json: expected a model directory in Hugging Face layout"
log "model: $MODEL"

# -- 2. environments ------------------------------------------------------------------------
pip_sources=()
if [ -n "$WHEELHOUSE" ]; then
  [ -d "$WHEELHOUSE" ] || die "LECODE_WHEELHOUSE=$WHEELHOUSE is not a directory"
  pip_sources=(--no-index --find-links "$WHEELHOUSE")
fi

find_python() {
  local py
  for py in python3.11 python3; do
    if command -v "$py" >/dev/null 2>&1 &&
      "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$py"
      return 0
    fi
  done
  return 1
}

create_venv() { # create_venv DIR DESCRIPTION PIP-ARGS...
  local dir="$1" what="$2"
  shift 2
  local py
  py="$(find_python)" || die "no Python >= 3.11 found to create $what"
  log "creating $what in $dir (up to ${INSTALL_TIMEOUT}s)"
  "$py" -m venv "$dir" || die "could not create a virtual environment in $dir"
  if ! timeout "$INSTALL_TIMEOUT" "$dir/bin/python" -m pip install -q ${pip_sources[@]+"${pip_sources[@]}"} "$@"; then
    die "installing $what failed. Offline machines need LECODE_WHEELHOUSE (a directory of wheels prepared where there is internet, see the header of this script) or an environment brought along in $dir"
  fi
}

MAIN_PY="$MAIN_VENV/bin/python"
if [ ! -x "$MAIN_VENV/bin/snakemake" ]; then
  torch_index=()
  [ -n "$WHEELHOUSE" ] || torch_index=(--extra-index-url https://download.pytorch.org/whl/cpu)
  create_venv "$MAIN_VENV" "the workflow environment" ${torch_index[@]+"${torch_index[@]}"} -r "$ROOT/requirements.lock"
  timeout "$INSTALL_TIMEOUT" "$MAIN_PY" -m pip install -q --no-deps -e "$ROOT" ||
    die "installing the lecode package into $MAIN_VENV failed"
fi
"$MAIN_PY" -c 'import lecode.llm.vllm, snakemake' 2>/dev/null ||
  die "$MAIN_VENV cannot import lecode and snakemake; rebuild it (make env)"

if [ -n "${LECODE_VLLM_COMMAND:-}" ]; then
  VLLM_COMMAND="$LECODE_VLLM_COMMAND"
elif [ "$DRY" = 1 ]; then
  STANDIN="$ROOT/tests/support/vllm_standin.py"
  [ -f "$STANDIN" ] || die "the dry run needs the stand-in server $STANDIN (tests/ of the repository)"
  VLLM_COMMAND="$(printf '%q %q' "$MAIN_PY" "$STANDIN")"
elif [ -x "$GPU_VENV/bin/vllm" ]; then
  VLLM_COMMAND="$GPU_VENV/bin/vllm serve"
elif command -v vllm >/dev/null 2>&1; then
  VLLM_COMMAND="$(command -v vllm) serve"
else
  create_venv "$GPU_VENV" "the vLLM environment" -r "$ROOT/requirements-gpu.txt"
  [ -x "$GPU_VENV/bin/vllm" ] || die "$GPU_VENV has no vllm executable after installing requirements-gpu.txt"
  VLLM_COMMAND="$GPU_VENV/bin/vllm serve"
fi
export LECODE_VLLM_COMMAND="$VLLM_COMMAND"
log "server command: $LECODE_VLLM_COMMAND"

# -- 3. project copy and configuration ------------------------------------------------------
mkdir -p "$PROJECT"
for name in Snakefile params.yaml profiles data workflow; do
  cp -R "$ROOT/$name" "$PROJECT/$name"
done
find "$PROJECT" -name __pycache__ -type d -prune -exec rm -rf {} +
TEST_SET="$(cd "$PROJECT" && "$MAIN_PY" -c 'import yaml; print(yaml.safe_load(open("params.yaml"))["dataset"]["test"])')"
export LECODE_MOCK_DATA="$PROJECT/$TEST_SET" # read by the stand-in only

serve_args_yaml=""
for arg in $SERVE_ARGS; do
  serve_args_yaml="$serve_args_yaml\"$arg\", "
done
cat >"$PROJECT/gpu.yaml" <<EOF
# Written by scripts/gpu_check.sh: one expert served by vLLM from a local model directory.
dataset: {n_shards: 1, limit: $CASES}
models:
  $ENTRY:
    backend: vllm
    model: $ENTRY
    model_path: "$MODEL"
    temperature: 0.7
    top_p: 0.9
    max_tokens: 512
    seed: 0
    concurrency: 8
    timeout: 300
    max_retries: 3
    gpu_memory_utilization: $MEM_UTIL
    serve_args: [${serve_args_yaml%, }]
    label: $ENTRY (vLLM)
experts:
  - {model: $ENTRY, strategy: zero_shot}
client: {model: fact_lookup, strategy: first_person_dialogue}
matcher: {model: lexical}
judge: null
simulation: {max_turns: $MAX_TURNS}
metrics: {bertscore: {enabled: false}}
report: {bootstrap: {resamples: 200}}
EOF

cd "$PROJECT"
lecode_cli() { "$MAIN_PY" -m lecode.cli "$@"; }

stop_servers() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -d "$PROJECT/store/servers" ]; then
    log "stopping the vLLM server"
    (cd "$PROJECT" && timeout 120 "$MAIN_PY" -m lecode.cli serve stop --params params.yaml --params gpu.yaml >&2) ||
      log "warning: stopping the server failed; see $PROJECT/store/servers"
  fi
  if [ -n "${OUT:-}" ] && [ -f "$PROJECT/logs/vllm/$ENTRY.log" ]; then
    mkdir -p "$OUT"
    tail -n 300 "$PROJECT/logs/vllm/$ENTRY.log" >"$OUT/vllm_server.log" || true
  fi
  [ "$rc" = 0 ] || log "failed (exit $rc); the project copy is in $PROJECT"
  exit "$rc"
}
trap stop_servers EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# -- 4. serve and run -----------------------------------------------------------------------
log "starting the server (up to ${SERVE_TIMEOUT}s until healthy)"
serve_started=$(date +%s)
timeout $((SERVE_TIMEOUT + 120)) "$MAIN_PY" -m lecode.cli serve start --params params.yaml --params gpu.yaml \
  --log-dir logs/vllm --timeout "$SERVE_TIMEOUT" >&2 ||
  die "the server did not start; its log: $PROJECT/logs/vllm/$ENTRY.log"
SERVE_S=$(($(date +%s) - serve_started))
lecode_cli serve status --params params.yaml --params gpu.yaml >&2

log "running the DAG: $CASES consultations (up to ${DAG_TIMEOUT}s)"
dag_started=$(date +%s)
if ! timeout "$DAG_TIMEOUT" "$MAIN_VENV/bin/snakemake" all_tables --cores 4 --configfile gpu.yaml \
  >"$WORK/snakemake.log" 2>&1; then
  tail -n 60 "$WORK/snakemake.log" >&2 || true
  die "snakemake failed or timed out; full log: $WORK/snakemake.log, job logs: $PROJECT/logs"
fi
DAG_S=$(($(date +%s) - dag_started))

# -- 5. check and summarise -----------------------------------------------------------------
SUMMARY_DIR="${OUT:-$WORK}"
mkdir -p "$SUMMARY_DIR"
GPU_CHECK_ENTRY="$ENTRY" GPU_CHECK_N="$CASES" GPU_CHECK_DIR="$SUMMARY_DIR" \
  GPU_CHECK_MODEL="$MODEL" GPU_CHECK_SERVE_S="$SERVE_S" GPU_CHECK_DAG_S="$DAG_S" \
  GPU_CHECK_TOTAL_S="$(($(date +%s) - STARTED))" GPU_CHECK_GPU="${GPU_INFO:-none (dry run)}" \
  "$MAIN_PY" - <<'PY'
import json
import os
import shutil
import sys
from pathlib import Path

entry, n = os.environ["GPU_CHECK_ENTRY"], int(os.environ["GPU_CHECK_N"])
out = Path(os.environ["GPU_CHECK_DIR"])
files = sorted(Path("results/transcripts", entry).rglob("*.jsonl"))
rows = [json.loads(line) for p in files for line in p.read_text("utf-8").splitlines() if line]
stops: dict[str, int] = {}
for t in rows:
    stops[t["stop_reason"]] = stops.get(t["stop_reason"], 0) + 1
calls = sum(t.get("usage", {}).get("expert", {}).get("calls", 0) for t in rows)
tokens = sum(t.get("usage", {}).get("expert", {}).get("completion_tokens", 0) for t in rows)
prov = rows[0]["provenance"] if rows else {}
# what the server said it served, from the stored responses
from lecode.llm.store import SEGMENT_GLOB, decode_line  # noqa: E402

reported: set[str] = set()
fingerprints: set[str] = set()
for seg in Path("store/responses").rglob(SEGMENT_GLOB):
    for line in seg.read_bytes().splitlines():
        decoded = decode_line(line)
        if decoded is not None:
            response = json.loads(decoded[1])["response"]
            reported.add(response.get("model") or "")
            fingerprints.add(response.get("system_fingerprint") or "")
summary = {
    "ok": len(rows) == n and stops.get("error", 0) == 0 and calls > 0,
    "consultations": len(rows),
    "expected": n,
    "stop_reasons": stops,
    "expert_calls": calls,
    "expert_completion_tokens": tokens,
    "questions_asked": sum(
        1 for t in rows for turn in t["turns"] if turn["kind"] == "question"
    ),
    "served_model": prov.get("expert.served_model", ""),
    "reported_model": ",".join(sorted(reported - {""})),
    "system_fingerprint": ",".join(sorted(fingerprints - {""})),
    "model_path": os.environ["GPU_CHECK_MODEL"],
    "gpu": os.environ["GPU_CHECK_GPU"],
    "seconds": {
        "server_start": int(os.environ["GPU_CHECK_SERVE_S"]),
        "dag": int(os.environ["GPU_CHECK_DAG_S"]),
        "total": int(os.environ["GPU_CHECK_TOTAL_S"]),
    },
    "errors": sorted({t["error"] for t in rows if t.get("error")})[:5],
}
(out / "gpu_check_summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False))
lines = [
    f"# GPU check: {'PASS' if summary['ok'] else 'FAIL'}",
    "",
    f"- GPU: {summary['gpu']}",
    f"- model: {summary['model_path']} (served as {summary['served_model']}, "
    f"reported {summary['reported_model'] or '?'})",
    f"- consultations: {len(rows)}/{n}, stop reasons {stops}",
    f"- expert calls: {calls}, completion tokens: {tokens}, "
    f"questions asked: {summary['questions_asked']}",
    f"- seconds: server start {summary['seconds']['server_start']}, "
    f"DAG {summary['seconds']['dag']}, total {summary['seconds']['total']}",
]
if summary["errors"]:
    lines += ["", "Errors:", *[f"- {e}" for e in summary["errors"]]]
table = Path("reports/tables/table3.md")
if table.exists():
    lines += ["", table.read_text("utf-8")]
    shutil.copy(table, out / "table3.md")
(out / "gpu_check_summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
print("\n".join(lines))
sys.exit(0 if summary["ok"] else 1)
PY
log "summary in $SUMMARY_DIR/gpu_check_summary.md"

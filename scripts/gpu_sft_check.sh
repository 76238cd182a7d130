#!/usr/bin/env bash
# SFT check on a lent GPU, unattended, within 10 minutes (each stage has its own timeout):
#   1. Key-fact-e training samples from the project's sample (offline writer);
#   2. a small randomly initialised Qwen2 model with a tokenizer trained on them (nothing is
#      downloaded: lecode.sft.tiny);
#   3. GPU_SFT_STEPS LoRA steps with TRL + PEFT (lecode.sft.train, bf16): prints s/step;
#   4. `vllm serve` of the model with the adapter (--enable-lora --lora-modules sft=ADAPTER);
#   5. two consultations against the adapter (zero-shot expert prompt; the client answers from
#      the sample case's facts): prints completion tokens/s.
#
#   scripts/gpu_sft_check.sh                 # on a GPU machine
#   GPU_SFT_DRY=1 scripts/gpu_sft_check.sh   # CPU dry run: no GPU, no vLLM; 2 training steps,
#                                            # the adapter generates through PEFT instead
#
# Python: LECODE_SFT_PYTHON, else the first of .venv-gpu/bin/python, .venv/bin/python, python3
# that imports torch, transformers, trl and peft (and vllm, unless dry). GPU machines reach no
# package index: that environment must be there (requirements-gpu.txt plus the `sft` extra).
# Environment (optional): GPU_SFT_STEPS (20; dry 2), GPU_SFT_HIDDEN (256; dry 32),
# GPU_SFT_LAYERS (4; dry 2), GPU_SFT_CASES (2), GPU_SFT_MEM_UTIL (0.3), GPU_SFT_WORKDIR,
# OUT (if set: gpu_sft_check.json and the server log are written there).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY="${GPU_SFT_DRY:-0}"
if [ "$DRY" = 1 ]; then
  STEPS="${GPU_SFT_STEPS:-2}" HIDDEN="${GPU_SFT_HIDDEN:-32}" LAYERS="${GPU_SFT_LAYERS:-2}"
  BATCH=2 ACCUM=1
else
  STEPS="${GPU_SFT_STEPS:-20}" HIDDEN="${GPU_SFT_HIDDEN:-256}" LAYERS="${GPU_SFT_LAYERS:-4}"
  BATCH=4 ACCUM=4
fi
CASES="${GPU_SFT_CASES:-2}"
MEM_UTIL="${GPU_SFT_MEM_UTIL:-0.3}"
STARTED=$(date +%s)

log() { printf '[gpu_sft_check %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  printf '[gpu_sft_check] ERROR: %s\n' "$*" >&2
  exit 1
}
command -v timeout >/dev/null 2>&1 || die "the 'timeout' command (coreutils) is required"

# -- machine and Python ---------------------------------------------------------------------
if [ "$DRY" != 1 ]; then
  command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: not a GPU machine? (GPU_SFT_DRY=1 for a CPU dry run)"
  log "GPU: $(timeout 60 nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"
fi
NEED="import torch, transformers, trl, peft"
[ "$DRY" = 1 ] || NEED="$NEED, vllm"
PY=""
for cand in "${LECODE_SFT_PYTHON:-}" "$ROOT/.venv-gpu/bin/python" "$ROOT/.venv/bin/python" python3; do
  [ -n "$cand" ] || continue
  command -v "$cand" >/dev/null 2>&1 || [ -x "$cand" ] || continue
  if timeout 300 "$cand" -c "$NEED" >/dev/null 2>&1; then
    PY="$cand"
    break
  fi
done
[ -n "$PY" ] || die "no Python with: $NEED (set LECODE_SFT_PYTHON; GPU hosts: requirements-gpu.txt + pip install -e '.[sft]')"
log "python: $PY"
if [ "$DRY" != 1 ]; then
  timeout 120 "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
    die "$PY has no CUDA torch"
fi

WORK="${GPU_SFT_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/lecode-gpu-sft.XXXXXX")}"
mkdir -p "$WORK"
RESULTS="$WORK/steps.jsonl"
: >"$RESULTS"
export PYTHONPATH="$ROOT/workflow${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
step() { # step TIMEOUT SUBCOMMAND ARGS...: one lecode.sft.gpucheck step, its JSON line kept
  local limit="$1"
  shift
  timeout "$limit" "$PY" -m lecode.sft.gpucheck "$@" | tee -a "$RESULTS"
}

SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM -- "-$SERVER_PID" 2>/dev/null || kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# -- data, model, training ------------------------------------------------------------------
log "data"
step 120 data --out "$WORK/data" >/dev/null
log "model (hidden $HIDDEN, $LAYERS layers)"
step 120 model --data "$WORK/data/train.jsonl" --out "$WORK/base" --hidden "$HIDDEN" --layers "$LAYERS" >/dev/null
log "training: $STEPS steps of $BATCH x $ACCUM samples"
step 240 train --base "$WORK/base" --data "$WORK/data/train.jsonl" --out "$WORK/train" \
  --steps "$STEPS" --batch "$BATCH" --accum "$ACCUM" >/dev/null
[ -f "$WORK/train/adapter/adapter_config.json" ] || die "no adapter was written"

# -- serving and consultations --------------------------------------------------------------
if [ "$DRY" = 1 ]; then
  log "dry run: vLLM skipped; the adapter generates through PEFT"
  step 120 local --base "$WORK/base" --adapter "$WORK/train/adapter" --data "$WORK/data/train.jsonl" >/dev/null
else
  PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  SERVER_LOG="$WORK/vllm.log"
  VLLM=("$PY" -m vllm.entrypoints.openai.api_server --model "$WORK/base")
  [ -x "$(dirname "$PY")/vllm" ] && VLLM=("$(dirname "$PY")/vllm" serve "$WORK/base")
  log "vLLM on 127.0.0.1:$PORT"
  setsid "${VLLM[@]}" --host 127.0.0.1 --port "$PORT" --served-model-name tiny \
    --enable-lora --lora-modules "sft=$WORK/train/adapter" --max-lora-rank 8 \
    --gpu-memory-utilization "$MEM_UTIL" --enforce-eager --max-model-len 4096 \
    >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 150); do
    if "$PY" -c "import json, sys, urllib.request as u; ids = {m['id'] for m in json.load(u.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2))['data']}; sys.exit(0 if 'sft' in ids else 1)" 2>/dev/null; then
      break
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 40 "$SERVER_LOG" >&2; die "vLLM exited"; }
    sleep 2
  done
  "$PY" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" 2>/dev/null ||
    { tail -n 40 "$SERVER_LOG" >&2; die "vLLM did not become healthy within 300 s"; }
  log "two consultations against the adapter"
  step 180 consult --base-url "http://127.0.0.1:$PORT/v1" --model sft --cases "$CASES" >/dev/null
fi

# -- summary --------------------------------------------------------------------------------
ELAPSED=$(($(date +%s) - STARTED))
SUMMARY="$("$PY" - "$RESULTS" "$ELAPSED" "$DRY" <<'EOF'
import json, sys
mark = "@gpucheck "
rows = [json.loads(l[len(mark):]) for l in open(sys.argv[1]) if l.startswith(mark)]
steps = {r["step"]: r for r in rows}
t = steps["train"]
serve = steps.get("consult") or steps.get("local")
out = {
    "dry_run": sys.argv[3] == "1",
    "device": t["device"],
    "train_steps": t["steps"],
    "seconds_per_step": t["seconds_per_step"],
    "final_loss": t["final_loss"],
    "tokens_per_s": serve["tokens_per_s"],
    "serving": "PEFT generate (dry run)" if "local" in steps else "vLLM --enable-lora",
    "consultations": serve.get("consultations", 0),
    "elapsed_s": int(sys.argv[2]),
    "steps": steps,
}
print(json.dumps(out, ensure_ascii=False))
EOF
)"
printf 'time per training step: %s s\n' "$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["seconds_per_step"])' "$SUMMARY")"
printf 'tokens/s: %s\n' "$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["tokens_per_s"])' "$SUMMARY")"
printf '%s\n' "$SUMMARY"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  printf '%s\n' "$SUMMARY" >"$OUT/gpu_sft_check.json"
  [ -z "${SERVER_LOG:-}" ] || cp "$SERVER_LOG" "$OUT/vllm.log" 2>/dev/null || true
fi
log "done in ${ELAPSED}s"

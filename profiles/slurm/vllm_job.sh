#!/usr/bin/env bash
# The vLLM part of a cluster run, as ONE GPU job: Snakemake runs inside the allocation with
# its local executor and its hooks: onstart lets the jobs start vLLM servers, the first job
# that calls a `backend: vllm` entry starts `vllm serve` for it on the GPU node's loopback,
# the other simulations of that entry talk to it there, and the hooks stop it when the run
# ends (success or failure). Afterwards the rest of the workflow
# runs on the cluster (`--workflow-profile profiles/slurm`), where those transcripts are done.
#
#   sbatch -A ACCOUNT -p GPU_PARTITION profiles/slurm/vllm_job.sh [TARGET] [SNAKEMAKE ARGS...]
#
# from the project root (the job starts there: $SLURM_SUBMIT_DIR). TARGET defaults to
# all_transcripts; use all_tables when the matcher or judge is also served by vLLM (then
# the whole workflow runs in this job). Any further arguments go to Snakemake, e.g.
# `--configfile configs/vllm-qwen7b.yaml`. Override the requests below on the sbatch command
# line (sbatch options win over #SBATCH lines), e.g. `--gres=gpu:a100:1 --time=24:00:00`.
#
# vLLM runs from its own environment (docs/llm-roles.md): .venv-vllm/bin/vllm if it exists,
# else `vllm` on PATH, unless LECODE_VLLM_COMMAND names another command prefix. Models are
# read from their model_path, which must be visible on the GPU node.
#
#SBATCH --job-name=lecode-vllm
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=64G
#SBATCH --time=12:00:00
set -euo pipefail

cd "${SLURM_SUBMIT_DIR:-.}"
die() {
  echo "vllm_job: ERROR: $*" >&2
  exit 1
}

[ -f Snakefile ] && [ -d profiles/default ] ||
  die "not started from the project root ($(pwd)); run sbatch there"
SNAKEMAKE="${LECODE_SNAKEMAKE:-.venv/bin/snakemake}"
[ -x "$SNAKEMAKE" ] || die "$SNAKEMAKE not found: build the environment first (make env)"

if [ -z "${LECODE_VLLM_COMMAND:-}" ]; then
  if [ -x .venv-vllm/bin/vllm ]; then
    export LECODE_VLLM_COMMAND="$(pwd)/.venv-vllm/bin/vllm serve"
  elif ! command -v vllm >/dev/null 2>&1; then
    die "no vLLM: create .venv-vllm (docs/llm-roles.md), put vllm on PATH, or set LECODE_VLLM_COMMAND"
  fi
fi

TARGET="${1:-all_transcripts}"
[ $# -gt 0 ] && shift
echo "vllm_job: job ${SLURM_JOB_ID:-?} on $(hostname -s), GPUs: ${CUDA_VISIBLE_DEVICES:-${SLURM_JOB_GPUS:-none listed}}," \
  "target $TARGET, vLLM: ${LECODE_VLLM_COMMAND:-vllm serve}" >&2
# The machine's own runtime settings (profiles/default): local executor, the hooks on.
exec "$SNAKEMAKE" "$TARGET" --workflow-profile profiles/default \
  --cores "${SLURM_CPUS_PER_TASK:-1}" "$@"

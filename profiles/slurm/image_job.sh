#!/usr/bin/env bash
# A SLURM job that runs the workflow inside the lecode image (podman on the node), for nodes
# without the project's .venv: Snakemake runs in the image with the local executor, the
# project directory (on the shared file system) mounted at its own path, so results, reports
# and store/ land there and the jobs import the checkout's package (docs/clusters.md).
#
#   sbatch -A ACCOUNT -p PARTITION profiles/slurm/image_job.sh [TARGET] [SNAKEMAKE ARGS...]
#
# from the project root. TARGET defaults to all_tables. The image is lecode:lock-<digest of
# requirements.lock>; a node that lacks it loads .image/lecode-lock-<digest>.tar (make
# image-archive) once. GPUs: the gpu image and the NVIDIA container toolkit's CDI devices,
#   LECODE_IMAGE_REF=localhost/lecode:lock-<digest>-gpu \
#   LECODE_IMAGE_ARGS="--device nvidia.com/gpu=all" sbatch --gres=gpu:1 ... image_job.sh
# Override the requests below on the sbatch command line.
#
#SBATCH --job-name=lecode-image
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=12:00:00
set -euo pipefail

cd "${SLURM_SUBMIT_DIR:-.}"
die() {
  echo "image_job: ERROR: $*" >&2
  exit 1
}
[ -f Snakefile ] && [ -d profiles/default ] && [ -f scripts/in_image.sh ] ||
  die "not started from the project root ($(pwd)); run sbatch there"

TARGET="${1:-all_tables}"
[ $# -gt 0 ] && shift
echo "image_job: job ${SLURM_JOB_ID:-?} on $(hostname -s), target $TARGET" >&2
# The machine's own runtime settings (profiles/default): local executor, the hooks on.
exec bash scripts/in_image.sh snakemake "$TARGET" --workflow-profile profiles/default \
  --cores "${SLURM_CPUS_PER_TASK:-1}" "$@"

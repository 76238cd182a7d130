#!/usr/bin/env bash
# Runs a command in the lecode image with the current directory (a lecode checkout or a copy)
# mounted at the same path and as the working directory, so results, reports and store/ land
# on the host and the jobs import the checkout's package (the image supplies the locked
# environment). A SLURM job script or a node without .venv runs the workflow this way:
#   scripts/in_image.sh snakemake all_tables --cores 8
# LECODE_IMAGE_REF: the image (default: the one `make image` builds for this lock file);
# LECODE_IMAGE_NETWORK: the container's network, host (default) or none;
# LECODE_IMAGE_ARGS: more options for `podman run` (e.g. --device nvidia.com/gpu=all with the
# NVIDIA container toolkit's CDI spec).
# The environment's LECODE_* and API key variables named in LECODE_IMAGE_ENV are passed on.
set -euo pipefail
source "$(dirname "$0")/image_env.sh"
ref="${LECODE_IMAGE_REF:-$IMAGE_REF}"
# A node without the image loads the archive of `make image-archive` from the project, once.
archive="$IMAGE_DIR/lecode-$IMAGE_TAG.tar"
if ! image_exists "$ref" && [ "$ref" = "$IMAGE_REF" ] && [ -s "$archive" ]; then
  echo "in_image: loading $archive" >&2
  "$ENGINE" load -q -i "$archive" >&2
fi
image_exists "$ref" || { echo "in_image: no image $ref (make image, or make image-archive and copy .image/)" >&2; exit 1; }
read -r -a run_opts <<<"$(image_run_opts "$ref")"
env_opts=()
for var in $(compgen -e | grep '^LECODE_' || true) ${LECODE_IMAGE_ENV:-}; do
  case "$var" in LECODE_IMAGE_*) continue ;; esac
  env_opts+=(-e "$var")
done
tty=(); [ -t 0 ] && [ -t 1 ] && tty=(-it)
# shellcheck disable=SC2086
exec "$ENGINE" run --rm "${tty[@]}" "${run_opts[@]}" --network "${LECODE_IMAGE_NETWORK:-host}" \
  -v "$PWD:$PWD" -w "$PWD" "${env_opts[@]}" ${LECODE_IMAGE_ARGS:-} "$ref" "$@"

#!/usr/bin/env bash
# `apptainer` for the image tests, where Debian has no Apptainer: the `exec` calls Snakemake's
# --software-deployment-method apptainer makes, run with podman in the lecode image. The
# ".sif" file it is given holds the podman image's reference. Options understood: those
# Snakemake passes (--quiet --silent, --home, --bind, --pwd); the host's LECODE_* variables
# and SINGULARITYENV_/APPTAINERENV_ ones go in, as Apptainer passes the environment.
set -euo pipefail
case "${1:-}" in --version | version) echo "apptainer version 1.3.6"; exit 0 ;; esac
while [ "${1:-}" = --quiet ] || [ "${1:-}" = --silent ]; do shift; done
[ "${1:-}" = exec ] || { echo "apptainer stand-in: only exec, got: $*" >&2; exit 2; }
shift
opts=()
workdir="$PWD"
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
  case "$1" in
    --home) opts+=(-v "$2:$2" -e "HOME=$2"); shift 2 ;;
    --bind | -B)
      src="${2%%:*}"; dst="${2#*:}"
      opts+=(-v "$src:$dst"); shift 2 ;;
    --pwd) workdir="$2"; shift 2 ;;
    --nv | --cleanenv) shift ;;
    *) echo "apptainer stand-in: unknown option $1" >&2; exit 2 ;;
  esac
done
ref="$(cat "$1")"
shift
echo "$ref $*" >>"$PWD/.apptainer-calls"   # what the tests count
for var in $(compgen -e | grep -E '^(LECODE_|SINGULARITYENV_|APPTAINERENV_)' || true); do
  name="${var#SINGULARITYENV_}"; name="${name#APPTAINERENV_}"
  opts+=(-e "$name=${!var}")
done
source "$(dirname "$(readlink -f "$0")")/../../scripts/image_env.sh"
read -r -a run_opts <<<"$(image_run_opts "$ref")"
exec "$ENGINE" run --rm "${run_opts[@]}" --network none -v "$PWD:$PWD" -v /tmp:/tmp \
  -w "$workdir" "${opts[@]}" "$ref" "$@"

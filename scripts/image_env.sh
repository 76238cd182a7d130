#!/usr/bin/env bash
# Shared by the image scripts (sourced): the engine, the image's name and how to run it.
#   ENGINE          podman (default) or docker
#   LECODE_IMAGE_NAME  repository name of the image (default lecode)
# The tag is the lock file's digest: lock-<first 12 hex of sha256(requirements.lock)>, the same
# one the Snakefile's container directive names, so a node runs exactly the locked environment.
IMAGE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGE_DIR="$IMAGE_ROOT/.image"
# podman unless only a working Docker engine is there (a docker client alone does not count:
# `make image` installs podman then)
if [ -z "${ENGINE:-}" ]; then
  ENGINE=podman
  if ! command -v podman >/dev/null 2>&1 && command -v docker >/dev/null 2>&1 &&
    timeout 10 docker info >/dev/null 2>&1; then
    ENGINE=docker
  fi
fi
LOCK_DIGEST="$(sha256sum "$IMAGE_ROOT/requirements.lock" | cut -c1-12)"
IMAGE_TAG="lock-$LOCK_DIGEST"
IMAGE_NAME="${LECODE_IMAGE_NAME:-lecode}"
IMAGE_REF="localhost/$IMAGE_NAME:$IMAGE_TAG"
[ "$ENGINE" = docker ] && IMAGE_REF="$IMAGE_NAME:$IMAGE_TAG"

image_exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

# Options `podman run` needs on this machine, found by trying (cached in .image/run-opts).
# Where the container runtime may not raise resource limits (no CAP_SYS_RESOURCE: podman's
# default open-files limit is above the hard limit) or crun refuses hybrid cgroups, runc with
# the caller's own limits works. The trial runs on the host's network, as every run of the
# image names its network (host or none): podman's default bridge needs iptables and netfilter
# rights that a node or a sandbox may lack, and no run uses it.
image_run_opts() {
  local cache="$IMAGE_DIR/run-opts.$ENGINE" img="$1" opts
  if [ -f "$cache" ]; then cat "$cache"; return; fi
  mkdir -p "$IMAGE_DIR"
  for opts in "" "--ulimit nofile=$(ulimit -Hn):$(ulimit -Hn) --ulimit nproc=32768:32768" \
    "--runtime runc --ulimit nofile=$(ulimit -Hn):$(ulimit -Hn) --ulimit nproc=32768:32768"; do
    # shellcheck disable=SC2086
    if "$ENGINE" run --rm --network host $opts "$img" true >/dev/null 2>&1; then
      echo "$opts" >"$cache"; echo "$opts"; return
    fi
  done
  echo "image: $ENGINE cannot start a container of $img (try: $ENGINE run --rm --network host $img true)" >&2
  return 1
}

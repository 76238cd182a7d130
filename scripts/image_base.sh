#!/usr/bin/env bash
# The Debian 12 base of the image, made without an image registry: debootstrap (minbase, from
# Debian's own packages) into a folder, packed once into
#   ${LECODE_IMAGE_CACHE:-/var/cache/lecode-image}/debian-bookworm-minbase.tar
# and imported as localhost/lecode-base:bookworm. Reuses the imported image, else the cached
# tar; delete both to start from debootstrap again (e.g. for newer security updates). Root.
set -euo pipefail
source "$(dirname "$0")/image_env.sh"
BASE_REF="localhost/lecode-base:bookworm"
CACHE="${LECODE_IMAGE_CACHE:-/var/cache/lecode-image}"
TAR="$CACHE/debian-bookworm-minbase.tar"
MIRROR="${LECODE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY="${LECODE_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}"

if image_exists "$BASE_REF"; then echo "base: $BASE_REF (present)"; exit 0; fi
if [ ! -s "$TAR" ]; then
  command -v debootstrap >/dev/null || { echo "base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
  mkdir -p "$CACHE"
  root="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
  trap 'rm -rf "$root"' EXIT
  echo "base: debootstrap bookworm from $MIRROR"
  start=$SECONDS
  debootstrap --variant=minbase --components=main bookworm "$root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
  cat >"$root/etc/apt/sources.list" <<SRC
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
SRC
  # as in Debian's own slim images: no package lists or caches in the base
  chroot "$root" apt-get clean
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/log/*.log
  tar --numeric-owner -C "$root" -cf "$TAR.partial" .
  mv "$TAR.partial" "$TAR"
  echo "base: $TAR in $((SECONDS - start)) s"
fi
"$ENGINE" import --change 'CMD ["/bin/bash"]' "$TAR" "$BASE_REF" >/dev/null
echo "base: $BASE_REF imported from $TAR"

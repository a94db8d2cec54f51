#!/usr/bin/env bash
# Build the evolve base image without a registry: a Debian bookworm rootfs from debootstrap
# (Debian's package mirror is the only network it needs), imported with `docker import`.
# Usage: build-offline.sh [IMAGE_TAG]   (default evolve-base:latest)
set -euo pipefail

tag=${1:-evolve-base:latest}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=python3,python3-pytest,git,procps,ca-certificates,patch

if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
rootfs=$(mktemp -d /tmp/evolve-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$mirror" >/dev/null
# An unprivileged user for agent code; the sandbox runs as it.
chroot "$rootfs" useradd --create-home --uid 1000 --shell /bin/bash agent
install -d -o 1000 -g 1000 "$rootfs/work"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'WORKDIR /work' \
  --change 'CMD ["/bin/bash"]' \
  --change "LABEL evolve.recipe=${EVOLVE_RECIPE:-unknown}" \
  --message "evolve base image (offline, debootstrap bookworm: $packages)" \
  - "$tag" >/dev/null
echo "built $tag"

#!/usr/bin/env bash
# Build the polyglot image offline-capably: Debian packages from the mirror, jest from the host's npm.
# Usage: build.sh [IMAGE_TAG] [LANGUAGES...]   (default evolve-polyglot:latest, all five languages)
# Needs the base image (sandboxes/base/build-offline.sh). Set BASE to build on another base image.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tag=${1:-evolve-polyglot:latest}
shift || true
languages=${*:-cpp go java javascript rust}

if [[ " $languages " == *" javascript "* && ! -d "$here/node/node_modules" ]]; then
  if command -v npm >/dev/null 2>&1; then
    npm install --prefix "$here/node" --no-audit --no-fund --loglevel=error >/dev/null
  else
    echo "warning: no npm on this host: the image gets node without jest (JavaScript tasks cannot be graded)" >&2
  fi
fi
docker build --quiet --build-arg "BASE=${BASE:-evolve-base:latest}" --build-arg "LANGUAGES=$languages" \
  -t "$tag" "$here" >/dev/null
echo "built $tag ($languages)"

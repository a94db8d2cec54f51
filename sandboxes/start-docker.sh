#!/usr/bin/env bash
# Make a Docker engine answer on this machine: install Debian's docker.io when dockerd is missing,
# start dockerd in the background when none answers, and wait until `docker info` succeeds.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi
if ! command -v dockerd >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
log=${DOCKERD_LOG:-/var/log/evolve-dockerd.log}
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "docker engine is up"
    exit 0
  fi
  sleep 1
done
echo "dockerd did not answer within 60 s; see $log" >&2
tail -n 20 "$log" >&2
exit 1

#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, for the container tests.
#
#   - reuses an engine that already answers (never starts a second daemon: a second dockerd
#     fights the first over /var/run/docker.sock and the shared docker0 bridge);
#   - installs Debian's docker.io when dockerd is missing (needs root and Debian's packages);
#   - starts dockerd in the background when none runs (there is no systemd on these machines),
#     then waits, bounded, until `docker version` answers.
#
# Usage: docker/ensure-docker-engine.sh [max-wait-seconds]   (default 60)
set -euo pipefail

max_wait="${1:-60}"
log="${DOCKERD_LOG:-/var/log/tokengap-dockerd.log}"

answers() {
  docker version >/dev/null 2>&1
}

wait_for_engine() {
  local waited=0
  until answers; do
    if (( waited >= max_wait )); then
      echo "docker-engine: no answer from the engine after ${max_wait}s; last lines of ${log}:" >&2
      tail -n 30 "${log}" >&2 2>/dev/null || true
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  echo "docker-engine: engine answers after ${waited}s ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
}

if answers; then
  echo "docker-engine: reusing the running engine ($(docker version --format '{{.Server.Version}}'))"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "docker-engine: installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
if ! command -v docker >/dev/null 2>&1; then
  echo "docker-engine: no docker CLI on PATH after installing docker.io" >&2
  exit 1
fi

# A dockerd that is already starting (or that answers on another socket) is not started twice.
if pgrep -x dockerd >/dev/null 2>&1; then
  echo "docker-engine: a dockerd process exists (pid $(pgrep -x dockerd | tr '\n' ' ')); waiting for it"
else
  echo "docker-engine: starting dockerd in the background (log: ${log})"
  setsid dockerd >"${log}" 2>&1 </dev/null &
fi
wait_for_engine

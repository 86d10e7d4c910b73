#!/usr/bin/env bash
# Startup benchmark: time from process start to ready, i.e. to the first
# /actuator/health that answers UP on the management port, for
#
#   aot      the image (docker/Dockerfile) as it ships: JDK 25 with the AOT cache /app/tokengap.aot
#   nocache  the same image without its cache: the entrypoint less -XX:AOTCache (JDK 25 and its
#            default CDS archive)
#   jar17    the plain jar on the host with JDK 17 (no JVM flags)
#   before   another image as it ships (BEFORE_IMAGE, e.g. one built from an earlier commit), to
#            compare two builds in one run: VARIANTS="aot before"
#   x1 .. x9 the image with JVM options added (JDK_JAVA_OPTIONS=$X1_OPTS .. $X9_OPTS), to try
#            flags: X1_OPTS="-XX:TieredStopAtLevel=1" VARIANTS="aot x1"
#
#   bench/startup.sh [runs]        # default 10 runs of each; results in target/startup/
#
# Runs alternate aot, nocache, jar17, aot, ... so drift on a shared machine hits each alike. The
# containers run as the chart runs them: read-only root, /tmp a tmpfs, 512 MiB memory limit, the
# image's JAVA_TOOL_OPTIONS, and a dummy engine URL (nothing is proxied; no network is needed).
#
# Times, all to the first health UP (curl every 15 ms):
#   from_launch   from `docker run` (container creation and start: docker's cost, an upper
#                 bound) or from the host JVM's fork
#   from_process  from the container's process start (docker inspect .State.StartedAt: the JVM is
#                 PID 1) or, on the host, from the fork; the target (<= 2.5 s) is this one
#   spring_uptime Spring Boot's own "Started ... (process running for Y)": the JVM's uptime when
#                 the context was started, just before the first health answer
# and cpu_ms, the CPU time (user + system, all threads) the JVM had used when health answered UP:
# less at the mercy of other work on a shared machine than the wall-clock times.
# Before the runs, one container with -XX:AOTMode=on -Xlog:aot checks that the cache is accepted
# (with that flag the JVM refuses to start when the cache it is given does not match).
#
# Environment: RUNS (default 10), IMAGE (default tokengap:it, the container tests' tag; built
# from docker/Dockerfile here unless SKIP_IMAGE_BUILD=1), VARIANTS (default "aot nocache jar17"),
# JAVA17, OUT (default target/startup), BEFORE_IMAGE (for the before variant).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-${RUNS:-10}}
IMAGE=${IMAGE:-tokengap:it}
VARIANTS=${VARIANTS:-"aot nocache jar17"}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
OUT=${OUT:-target/startup}
DUMMY_UPSTREAM=--tokengap.upstream.url=http://127.0.0.1:9
CONTAINER_OPTS=(--read-only --tmpfs /tmp:rw,exec,size=64m --memory 512m)

log() { echo "startup: $*" >&2; }
now_ns() { date +%s%N; }
# CPU time (user + system, ms) of a process so far, from /proc/PID/stat (utime, stime).
cpu_ms() {
  local fields
  fields=$(sed 's/^.*) //' "/proc/$1/stat")
  # shellcheck disable=SC2086
  set -- ${fields}
  echo $(( (${12} + ${13}) * 1000 / $(getconf CLK_TCK) ))
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

CONTAINER=""
HOST_PID=""
cleanup() {
  [[ -n "${CONTAINER}" ]] && docker rm -f "${CONTAINER}" >/dev/null 2>&1 || true
  [[ -n "${HOST_PID}" ]] && kill "${HOST_PID}" 2>/dev/null || true
}
trap cleanup EXIT

# The jar, the engine, the base image and the image.
if ! ls target/tokengap-*.jar >/dev/null 2>&1; then
  log "no jar in target/: packaging it"
  nice -n 10 ./mvnw -B -q package -DskipTests
fi
JAR=$(ls target/tokengap-*.jar | head -n 1)
if [[ " ${VARIANTS} " =~ \ (aot|nocache|before|x[1-9])\  ]]; then
  bash docker/ensure-docker-engine.sh 120 >&2
  if [[ "${SKIP_IMAGE_BUILD:-0}" != 1 ]]; then
    bash docker/build-offline-images.sh >&2
    log "building ${IMAGE} from docker/Dockerfile (cached layers when nothing changed)"
    # --cpu-shares: the training run in the build yields to other work on a shared machine.
    nice -n 10 docker build --cpu-shares 256 -q -f docker/Dockerfile -t "${IMAGE}" . >/dev/null
  fi
  # Runs use the image's id, not its tag: a build elsewhere that retags it cannot swap it mid-run.
  IMAGE_ID=$(docker image inspect -f '{{.Id}}' "${IMAGE}")
  if [[ " ${VARIANTS} " == *" before "* ]]; then
    BEFORE_IMAGE_ID=$(docker image inspect -f '{{.Id}}' "${BEFORE_IMAGE:?the before variant needs BEFORE_IMAGE}")
    log "before: image ${BEFORE_IMAGE} ${BEFORE_IMAGE_ID:7:12}"
  fi
  # The nocache variant: the image's own entrypoint without -XX:AOTCache, one word per line.
  mapfile -t NOCACHE_ENTRYPOINT < <(docker image inspect -f '{{json .Config.Entrypoint}}' "${IMAGE_ID}" \
    | python3 -c 'import json, sys; print("\n".join(a for a in json.load(sys.stdin) if not a.startswith("-XX:AOTCache=")))')
  IMAGE_TOOL_OPTIONS=$(docker image inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "${IMAGE_ID}" \
    | sed -n 's/^JAVA_TOOL_OPTIONS=//p')
  log "image ${IMAGE} ${IMAGE_ID:7:12}, $(docker image inspect -f '{{.Size}}' "${IMAGE_ID}" \
    | awk '{printf "%.0f MB", $1 / 1e6}'), JAVA_TOOL_OPTIONS=${IMAGE_TOOL_OPTIONS}"
fi

rm -rf "${OUT}" && mkdir -p "${OUT}/logs"
RESULTS="${OUT}/runs.csv"
echo "run,variant,from_launch_ms,from_process_ms,spring_uptime_s,spring_started_s,cpu_ms,load1" >"${RESULTS}"

# Polls /actuator/health on the port until it answers UP and prints the time it did (ns); fails
# when the process is gone or after 120 s. One curl makes every poll (66 a second, a new URL
# ?N each, its body on a line of its own, unbuffered): a curl per poll would cost this 2-core box
# some 50 ms of CPU each time, most of a core, and slow down what it measures.
await_up() { # await_up PORT PID
  local port=$1 pid=$2 line poller status=1
  exec {polls}< <(exec timeout 120 curl -sN --rate 66/s -m 1 -w '\n' "http://127.0.0.1:${port}/actuator/health?[1-8000]")
  poller=$!
  while read -r -u "${polls}" line; do
    if [[ "${line}" == *'"status":"UP"'* ]]; then
      now_ns
      status=0
      break
    fi
    [[ -e "/proc/${pid}" ]] || break
  done
  kill "${poller}" 2>/dev/null || true
  exec {polls}<&-
  return "${status}"
}

# Spring Boot's "Started TokengapApplication in X seconds (process running for Y)": "Y,X".
spring_times() {
  sed -n 's/.*Started TokengapApplication in \([0-9.]*\) seconds (process running for \([0-9.]*\)).*/\2,\1/p' "$1" \
    | head -n 1
}

measure() { # measure RUN VARIANT: appends one row to runs.csv
  local run=$1 variant=$2 port launch up started cpu pid load logfile="${OUT}/logs/${2}-${1}.log"
  port=$(free_port)
  load=$(cut -d' ' -f1 /proc/loadavg)
  case "${variant}" in
    aot|nocache|before|x[1-9])
      local entrypoint=() image="${IMAGE_ID}" env=()
      [[ "${variant}" == before ]] && image="${BEFORE_IMAGE_ID}"
      if [[ "${variant}" == x[1-9] ]]; then
        local opts="X${variant#x}_OPTS"
        env=(-e "JDK_JAVA_OPTIONS=${!opts:?variant ${variant} needs ${opts}}")
      fi
      [[ "${variant}" == nocache ]] && entrypoint=(--entrypoint "${NOCACHE_ENTRYPOINT[0]}")
      local args=("${NOCACHE_ENTRYPOINT[@]:1}")
      [[ "${variant}" != nocache ]] && args=()
      launch=$(now_ns)
      CONTAINER=$(docker run -d "${CONTAINER_OPTS[@]}" -p "127.0.0.1:${port}:8081" "${env[@]}" "${entrypoint[@]}" \
        "${image}" "${args[@]}" "${DUMMY_UPSTREAM}")
      pid=$(docker inspect -f '{{.State.Pid}}' "${CONTAINER}")
      up=$(await_up "${port}" "${pid}") || { docker logs "${CONTAINER}" >"${logfile}" 2>&1; \
        log "${variant} run ${run} never answered UP: ${logfile}"; exit 1; }
      cpu=$(cpu_ms "${pid}")
      started=$(date -d "$(docker inspect -f '{{.State.StartedAt}}' "${CONTAINER}")" +%s%N)
      docker logs "${CONTAINER}" >"${logfile}" 2>&1
      docker rm -f "${CONTAINER}" >/dev/null
      CONTAINER=""
      ;;
    jar17)
      launch=$(now_ns)
      "${JAVA17}" -jar "${JAR}" "${DUMMY_UPSTREAM}" --server.port=0 --management.server.port="${port}" \
        >"${logfile}" 2>&1 &
      HOST_PID=$!
      started=${launch}
      up=$(await_up "${port}" "${HOST_PID}") || { log "jar17 run ${run} never answered UP: ${logfile}"; exit 1; }
      cpu=$(cpu_ms "${HOST_PID}")
      kill "${HOST_PID}"
      wait "${HOST_PID}" 2>/dev/null || true
      HOST_PID=""
      ;;
    *) log "unknown variant ${variant}"; exit 1 ;;
  esac
  local spring
  spring=$(spring_times "${logfile}")
  echo "${run},${variant},$(( (up - launch) / 1000000 )),$(( (up - started) / 1000000 )),${spring:-,},${cpu},${load}" \
    >>"${RESULTS}"
  log "run ${run} ${variant}: $(( (up - launch) / 1000000 )) ms from launch, $(( (up - started) / 1000000 )) ms \
from process start, Spring (uptime,started) ${spring:-?} s, CPU ${cpu} ms, load ${load}"
}

# The cache must be accepted: with -XX:AOTMode=on the JVM refuses to start when it is not.
if [[ " ${VARIANTS} " == *" aot "* ]]; then
  log "checking that the image's JVM accepts its AOT cache (-XX:AOTMode=on, exit on refresh)"
  if ! docker run --rm "${CONTAINER_OPTS[@]}" \
      -e JDK_JAVA_OPTIONS="-XX:AOTMode=on -Xlog:aot -Dspring.context.exit=onRefresh" \
      "${IMAGE_ID}" "${DUMMY_UPSTREAM}" >"${OUT}/logs/aotmode-on.log" 2>&1 \
      || ! grep -q 'Using AOT-linked classes: true' "${OUT}/logs/aotmode-on.log"; then
    log "the image's JVM did not use its AOT cache: ${OUT}/logs/aotmode-on.log"
    grep -E 'aot\]' "${OUT}/logs/aotmode-on.log" | tail -n 8 >&2
    exit 1
  fi
fi

for (( run = 1; run <= RUNS; run++ )); do
  for variant in ${VARIANTS}; do
    measure "${run}" "${variant}"
  done
done

python3 - "${RESULTS}" <<'PY' | tee "${OUT}/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
order = []
for row in rows:
    if row["variant"] not in order:
        order.append(row["variant"])
def stats(values):
    return "%7.0f %7.0f %7.0f" % (statistics.median(values), min(values), max(values))
def stats_s(values):
    return "%7.2f %7.2f %7.2f" % (statistics.median(values), min(values), max(values))
print("variant  runs | from process start, ms  | from launch (docker run), ms | Spring's JVM uptime, s  | CPU to ready, ms")
print("              |     p50     min     max  |     p50     min     max      |     p50     min     max |     p50     min     max")
for variant in order:
    group = [r for r in rows if r["variant"] == variant]
    uptime = [float(r["spring_uptime_s"]) for r in group if r["spring_uptime_s"]]
    print("%-8s %4d | %s  | %s      | %s | %s" % (variant, len(group),
          stats([int(r["from_process_ms"]) for r in group]),
          stats([int(r["from_launch_ms"]) for r in group]), stats_s(uptime) if uptime else "      -",
          stats([int(r["cpu_ms"]) for r in group])))
loads = [float(r["load1"]) for r in rows]
print("1-minute load average during the runs: p50 %.2f, min %.2f, max %.2f (%d cores)"
      % (statistics.median(loads), min(loads), max(loads), __import__("os").cpu_count()))
PY
log "raw data: ${RESULTS}, logs: ${OUT}/logs/"

#!/usr/bin/env bash
# Where the image's start-up CPU goes: runs the image once as bench/startup.sh runs it (read-only
# root, /tmp a tmpfs, 512 MiB, a dummy engine URL) and, at the first /actuator/health that answers
# UP, prints each kind of JVM thread's CPU time so far (user + system, from
# /proc/PID/task/*/stat) and its nice value.
#
#   bench/startup-threads.sh [IMAGE [docker run options...]]    # default tokengap:it
#   bench/startup-threads.sh tokengap:it -e JDK_JAVA_OPTIONS=-XX:TieredStopAtLevel=1
#
# Threads are grouped by name (the kernel's 15 characters less a trailing number: "C2
# CompilerThre", "reactor-http-ep", "tokengap-epoll", "GC Thread", "java" for the launcher and main threads, ...);
# groups under 20 ms are left out of the list but counted in the total.
set -euo pipefail
IMAGE=${1:-tokengap:it}
shift || true
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container=$(docker run -d --read-only --tmpfs /tmp:rw,exec,size=64m --memory 512m -p "127.0.0.1:${port}:8081" \
  "$@" "${IMAGE}" --tokengap.upstream.url=http://127.0.0.1:9)
trap 'docker rm -f "${container}" >/dev/null 2>&1 || true' EXIT
pid=$(docker inspect -f '{{.State.Pid}}' "${container}")
# One curl polls 66 times a second (as bench/startup.sh does): a curl per poll would cost CPU.
exec {polls}< <(exec timeout 120 curl -sN --rate 66/s -m 1 -w '\n' "http://127.0.0.1:${port}/actuator/health?[1-8000]")
up=1
while read -r -u "${polls}" line; do
  if [[ "${line}" == *'"status":"UP"'* ]]; then up=0; break; fi
done
[[ "${up}" == 0 ]] || { echo "startup-threads: ${IMAGE} never answered UP" >&2; docker logs "${container}" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
for task in /proc/"${pid}"/task/*; do
  # utime, stime and nice are fields 14, 15 and 19 of stat: the 12th, 13th and 17th after the
  # ") " that ends the (possibly spaced) comm field.
  read -r -a fields <<<"$(sed 's/^.*) //' "${task}/stat")"
  echo "$(( (fields[11] + fields[12]) * 1000 / ticks ))|${fields[16]}|$(sed 's/[#-]*[0-9]*$//' "${task}/comm")"
done | awk -F'|' '{ key = $3 " (nice " $2 ")"; cpu[key] += $1; total += $1 }
  END { for (k in cpu) if (cpu[k] >= 20) printf "%7d ms  %s\n", cpu[k], k; printf "%7d ms  all threads\n", total }' \
  | sort -rn
docker logs "${container}" 2>&1 | grep -o 'Started TokengapApplication.*' || true

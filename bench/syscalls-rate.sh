#!/usr/bin/env bash
# System calls per non-streaming request: the packaged jar under the churn client's
# rate mode (bench/churn/client.mjs --mode rate, the Node backend of bench/churn/), `strace -c -f`
# attached to the JVM for STRACE_S seconds in the middle of the run. One run per flag set, the
# tables one after the other; counts are divided by the requests the window should hold (rate x
# STRACE_S: the client sends them evenly spaced, and its log says whether any failed).
#
#   bench/syscalls-rate.sh OUT_DIR [RATE] -- "" "-Dtokengap.netty.deferInterest=false"
#
# Each word after -- is one run's extra JVM flags ("" = defaults). strace slows the JVM it
# traces: the counts are what to read, not the times.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); shift
rate=1000
if [ "${1:-}" != "--" ]; then rate=$1; shift; fi
[ "${1:-}" = "--" ] && shift
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
STRACE_S=${STRACE_S:-5}
mkdir -p "$out"
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
"$NODE" bench/churn/backend.mjs --port 27700 --interval-ms 20 >"$out/backend.log" 2>&1 &
backend=$!
trap 'kill $backend 2>/dev/null || true' EXIT
run=0
for flags in "$@"; do
  run=$((run + 1))
  # shellcheck disable=SC2086
  "$JAVA17" -Xmx256m $flags -jar "$JAR" --server.port=27780 --management.server.port=27781 \
    --tokengap.upstream.url=http://127.0.0.1:27700 >"$out/tokengap-$run.log" 2>&1 &
  proxy=$!
  until curl -sf http://127.0.0.1:27781/actuator/health >/dev/null; do sleep 0.5; done
  "$NODE" bench/churn/client.mjs --url http://127.0.0.1:27780 --target "run$run" --mode rate --rate "$rate" \
    --warmup-s 4 --measure-s $((STRACE_S + 8)) --seed 13 --round 1 --session syscalls \
    --out "$out/churn.jsonl" >"$out/client-$run.log" 2>&1 &
  client=$!
  sleep 8
  timeout -s INT "$STRACE_S" strace -c -f -p "$proxy" -o "$out/strace-$run.txt" 2>/dev/null || true
  wait $client
  kill $proxy; wait $proxy 2>/dev/null || true
  requests=$((rate * STRACE_S))
  echo "== run $run: flags [${flags}], ~$requests requests in the ${STRACE_S} s window (rate x window)"
  awk -v n="$requests" '/^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ {
      calls = $4; name = $NF; printf "  %-16s %8d  %6.2f per request\n", name, calls, calls / n }' \
    "$out/strace-$run.txt" | sort -k3 -rn | head -12
done

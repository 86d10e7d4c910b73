#!/usr/bin/env bash
# Where fixed:100's slow events come from: the event loop's own queue, or
# the machine's scheduler leaving a runnable loop without a CPU. Runs the churn client's fixed:100
# (200 streams of 100 tokens, an event every 20 ms) through tokengap (the packaged jar) and through
# the Netty floor proxy (bench/bare/NettyFloorProxy.java http), one after the other in each round,
# and while each measures, samples every 10 ms how long the proxy's loop threads, the client and the
# backend waited for a CPU (bench/runqueue.py, from /proc/*/task/*/schedstat).
#
#   bench/stall-sched.sh        # ROUNDS [2], WARM_S [60] unrecorded, MEAS_S [60]; ~10 minutes;
#                               # output under OUT [target/stall-sched]: churn.jsonl (the client's
#                               # lines: slowest event, coalesced events) and one runqueue table per
#                               # target, round and process
set -Eeuo pipefail
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${OUT:-target/stall-sched}"); mkdir -p "$OUT"
ROUNDS=${ROUNDS:-2}
WARM_S=${WARM_S:-60}
MEAS_S=${MEAS_S:-60}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
[ -s target/bare-classpath.txt ] || ./mvnw -q -B dependency:build-classpath -Dmdep.outputFile=target/bare-classpath.txt
"$NODE" bench/churn/backend.mjs --port 27600 --interval-ms 20 >"$OUT/backend.log" 2>&1 &
backend=$!
proxy=
trap 'kill $proxy $backend 2>/dev/null || true' EXIT

start() { # start TARGET: the proxy on port 27680 in front of the backend; sets proxy
  if [ "$1" = tokengap ]; then
    "$JAVA17" -Xmx256m -jar "$JAR" --server.port=27680 --management.server.port=27681 \
      --tokengap.upstream.url=http://127.0.0.1:27600 >"$OUT/$1.log" 2>&1 &
    proxy=$!
    until curl -sf http://127.0.0.1:27681/actuator/health >/dev/null; do sleep 0.5; done
  else
    "$JAVA17" -Xmx256m -cp "$(cat target/bare-classpath.txt)" bench/bare/NettyFloorProxy.java http 27680 27600 \
      >"$OUT/$1.log" 2>&1 &
    proxy=$!
    until grep -qs NettyFloorProxy "$OUT/$1.log"; do sleep 0.5; done
  fi
}

client() { # client TARGET ROUND MEASURE_S OUT
  "$NODE" bench/churn/client.mjs --url http://127.0.0.1:27680 --target "$1" --mode fixed --concurrency 200 \
    --tokens 100 --interval-ms 20 --seed $((12 + $2)) --round "$2" --session stall-sched --pids "$proxy" \
    --backend-pids "$backend" --warmup-s 3 --measure-s "$3" --out "$4"
}

for round in $(seq 1 "$ROUNDS"); do
  for target in tokengap netty-http; do
    start "$target"
    echo "stall-sched: $(date +%T) round $round: $target, ${WARM_S} s unrecorded" >&2
    client "$target" 0 "$WARM_S" /dev/null >/dev/null
    echo "stall-sched: $(date +%T) round $round: $target, ${MEAS_S} s measured" >&2
    client "$target" "$round" "$MEAS_S" "$OUT/churn.jsonl" >"$OUT/client-$target-$round.txt" &
    churn=$!
    sleep 3
    client_pid=$(pgrep -n -f "bench/churn/client.mjs --url http://127.0.0.1:27680 --target $target")
    samplers=()
    python3 bench/runqueue.py "$proxy" "$MEAS_S" --threads tokengap-epoll,multiThreadIoEv \
      >"$OUT/runqueue-$target-$round-proxy.txt" &
    samplers+=($!)
    python3 bench/runqueue.py "$client_pid" "$MEAS_S" --threads node >"$OUT/runqueue-$target-$round-client.txt" &
    samplers+=($!)
    python3 bench/runqueue.py "$backend" "$MEAS_S" --threads node >"$OUT/runqueue-$target-$round-backend.txt" &
    samplers+=($!)
    wait $churn
    wait "${samplers[@]}"
    kill "$proxy"; wait "$proxy" 2>/dev/null || true
    proxy=
    cat "$OUT/client-$target-$round.txt" "$OUT/runqueue-$target-$round-proxy.txt"
  done
done

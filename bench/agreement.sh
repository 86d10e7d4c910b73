#!/usr/bin/env bash
# Do tokengap's own histograms agree with what a client measures in the same run? tokengap (the
# jar) in front of the built-in simulator (the jar in simulator mode), its ITL/TTFT/E2E edges made
# fine (0.5 ms / 1 ms / 25 ms) so that bucketing is not what differs, then `tokengap bench` with
# both metrics URLs.
#
#   bench/agreement.sh          # ~1 minute; the bench output is in target/agreement/
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/agreement}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
SIM_PORT=27000 TG_PORT=27080
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
rm -rf "$OUT" && mkdir -p "$OUT"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_for() { for _ in $(seq 120); do curl -sf -o /dev/null "$1" && return 0; sleep 0.5; done; exit 1; }
edges() { python3 -c "import sys; a,b,s=map(float,sys.argv[1:4]); n=round((b-a)/s)+1; \
print(','.join(f'{a+i*s:.4f}'.rstrip('0').rstrip('.') for i in range(n))+','+sys.argv[4])" "$@"; }

"$JAVA" -jar "$JAR" --tokengap.mode=simulator --tokengap.sim.port=$SIM_PORT >"$OUT/sim.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$SIM_PORT/health"
"$JAVA" -Xmx256m -jar "$JAR" --server.port=$TG_PORT --management.server.port=$((TG_PORT + 1)) \
  --tokengap.upstream.url=http://127.0.0.1:$SIM_PORT \
  --tokengap.metrics.itl-buckets="$(edges 0.0005 0.15 0.0005 0.2,0.3,0.4,0.5,0.75,1,2.5,5,10,20,40,80)" \
  --tokengap.metrics.ttft-buckets="$(edges 0.001 0.3 0.001 0.5,0.75,1,2.5,5,10,20,40,80,160,640,2560)" \
  --tokengap.metrics.request-buckets="$(edges 0.1 6 0.025 10,15,20,30,40,50,60,120,240,480,960,1920,7680)" \
  >"$OUT/tokengap.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$((TG_PORT + 1))/actuator/health"

# BENCH_JAVA_OPTS: JVM flags of the bench client (e.g. a large young generation, so it never collects).
bench() { "$JAVA" ${BENCH_JAVA_OPTS:-} -jar "$JAR" bench --base-url http://127.0.0.1:$TG_PORT "$@"; }
# Warm-up (JIT of both JVMs), not reported.
bench --num-prompts 100 --request-rate 20 --output-len 32 --no-progress >/dev/null
bench --num-prompts 300 --request-rate 15 --max-concurrency 64 --input-len 64:512 --output-len 64:256 \
  --seed 1 --goodput ttft:500 tpot:50 \
  --tokengap-metrics http://127.0.0.1:$((TG_PORT + 1))/actuator/prometheus \
  --engine-metrics http://127.0.0.1:$SIM_PORT/metrics --json "$OUT/bench.json" | tee "$OUT/bench.txt"

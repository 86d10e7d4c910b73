#!/usr/bin/env bash
# Where a proxy's added delay per event goes: tokengap and nginx in front of the churn
# backend, each with bench/stampshim preloaded, alternated with a direct connection in one run.
# For every content event the shim notes how late (after the backend's stamp, the same
# CLOCK_MONOTONIC) the proxy's read of it returned and how late its write of it returned; the
# churn client measures its own one-way delay as in bench/overhead.sh. So each proxy's median is
# split into: backend write -> proxy read (the event waits in the socket for the proxy to get to
# it), proxy read -> proxy write returned (the proxy's own work, including the write syscall that
# delivers into the client's socket), and the rest (the client's side).
#
#   bench/stages.sh                       # ~8 minutes; results in target/stages/
#
# Environment [defaults]: OUT [target/stages]  ROUNDS [2]  MEASURE_S [20]  WARMUP_S [3]
#   SCENARIOS ["fixed:1000 fixed:100"] (fixed:N or mix:A-B, as bench/overhead.sh's CHURN)
#   SPREAD_MS [0]  the backend's --spread-ms   TG_FLAGS [""] extra JVM flags for tokengap
#   WARM_S [20]  seconds of unrecorded fixed:100 per proxy before the first round (the JIT)
#   JAVA17  NODE [node]  CC [cc]
set -Eeuo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-target/stages}
ROUNDS=${ROUNDS:-2}
MEASURE_S=${MEASURE_S:-20}
WARMUP_S=${WARMUP_S:-3}
SCENARIOS=${SCENARIOS:-"fixed:1000 fixed:100"}
SPREAD_MS=${SPREAD_MS:-0}
TG_FLAGS=${TG_FLAGS:-}
WARM_S=${WARM_S:-20}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
CC=${CC:-cc}
BACKEND_PORT=27600 TG_PORT=27680 NGINX_PORT=27700
OUT=$(realpath -m "$OUT")
mkdir -p "$OUT/nginx"
"$CC" -O2 -Wall -shared -fPIC -o "$OUT/stampshim.so" bench/stampshim/stampshim.c -ldl
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
for port in $BACKEND_PORT $TG_PORT $((TG_PORT + 1)) $NGINX_PORT; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "stages: port $port is taken" >&2; exit 1; fi
done
wait_for() {
  for _ in $(seq 120); do curl -sf -o /dev/null "$1" && return 0; sleep 0.5; done
  echo "stages: $2 did not come up ($1)" >&2; exit 1
}
rm -f "$OUT"/*.hist
"$NODE" bench/churn/backend.mjs --port $BACKEND_PORT --interval-ms 20 --spread-ms "$SPREAD_MS" >"$OUT/backend.log" 2>&1 &
PIDS+=($!)
backend=$!
wait_for "http://127.0.0.1:$BACKEND_PORT/health" backend
# shellcheck source=bench/nginx-conf.sh
. bench/nginx-conf.sh
nginx_conf "$OUT/nginx" $NGINX_PORT $BACKEND_PORT $'env STAMPSHIM_FILE;\nenv LD_PRELOAD;' >"$OUT/nginx/nginx.conf"
STAMPSHIM_FILE="$OUT/nginx.hist" LD_PRELOAD="$OUT/stampshim.so" nginx -c "$OUT/nginx/nginx.conf" &
PIDS+=($!)
nginx_master=$!
wait_for "http://127.0.0.1:$NGINX_PORT/health" nginx
# shellcheck disable=SC2086 # the flags are words
STAMPSHIM_FILE="$OUT/tokengap.hist" LD_PRELOAD="$OUT/stampshim.so" "$JAVA17" -Xmx256m $TG_FLAGS -jar "$JAR" \
  --server.port=$TG_PORT --management.server.port=$((TG_PORT + 1)) \
  --tokengap.upstream.url=http://127.0.0.1:$BACKEND_PORT >"$OUT/tokengap.log" 2>&1 &
PIDS+=($!)
tokengap=$!
wait_for "http://127.0.0.1:$((TG_PORT + 1))/actuator/health" tokengap
nginx_pids="$nginx_master,$(pgrep -P "$nginx_master" | paste -sd, -)"

client() { # client TARGET PORT SCENARIO ROUND PIDS MEASURE_S OUT
  local kind=${3%%:*} arg=${3#*:} mode
  case $kind in
    fixed) mode=(--mode fixed --concurrency 200 --tokens "$arg") ;;
    mix) mode=(--mode mix --rate 35 --min-tokens "${arg%-*}" --max-tokens "${arg#*-}") ;;
    *) echo "stages: unknown scenario '$3' (fixed:N, mix:A-B)" >&2; exit 1 ;;
  esac
  "$NODE" bench/churn/client.mjs --url "http://127.0.0.1:$2" --target "$1" "${mode[@]}" --interval-ms 20 \
    --seed $((12 + $4)) --round "$4" --session stages --pids "$5" --backend-pids "$backend" \
    --warmup-s "$WARMUP_S" --measure-s "$6" --out "$7"
}
echo "stages: $(date +%T) warm-up" >&2
for target in "tokengap $TG_PORT $tokengap" "nginx $NGINX_PORT $nginx_pids"; do
  read -r name port pids <<<"$target"
  client warmup "$port" fixed:100 0 "" "$WARM_S" /dev/null 2>/dev/null
done
: >"$OUT/stages.jsonl"
for scenario in $SCENARIOS; do
  for round in $(seq "$ROUNDS"); do
    client direct $BACKEND_PORT "$scenario" "$round" "" "$MEASURE_S" "$OUT/churn.jsonl"
    for target in "tokengap $TG_PORT $tokengap" "nginx $NGINX_PORT $nginx_pids"; do
      read -r name port pids <<<"$target"
      cp "$OUT/$name.hist" "$OUT/before.hist"
      client "$name" "$port" "$scenario" "$round" "$pids" "$MEASURE_S" "$OUT/churn.jsonl"
      python3 bench/stampshim/stages.py "$OUT/before.hist" "$OUT/$name.hist" "$name ${scenario} r$round" | tee -a "$OUT/stages.jsonl"
    done
  done
done
python3 bench/stampshim/stages_report.py "$OUT/stages.jsonl" "$OUT/churn.jsonl" | tee "$OUT/report.md"

#!/usr/bin/env bash
# Why tokengap costs what it costs: syscalls per relayed event for tokengap and nginx (strace over a
# fixed window of a steady 50 x 20 ms load), and tokengap's hot methods under 200 x 20 ms (JFR).
#
#   bench/profile.sh            # ~3 minutes; results in target/profile/
#
# strace slows the traced process; the counts per event are what matter, not the timings.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/profile}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
JAVA25=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
BACKEND_PORT=27100 TG_PORT=27180 NGINX_PORT=27200
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
# The lab harness (dev.tokengap.lab, test sources: not in the jar) runs from the test classpath.
[ -f target/test-classpath.txt ] && [ -f target/test-classes/dev/tokengap/lab/OverheadProbe.class ] \
  || ./mvnw -q -B test-compile dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
LAB_CP="$PWD/target/test-classes:$PWD/target/classes:$(cat target/test-classpath.txt)"
for tool in strace nginx; do
  command -v $tool >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $tool >/dev/null
done
rm -rf "$OUT" && mkdir -p "$OUT/nginx"
OUT=$(cd "$OUT" && pwd)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
launch() { local java=$1 main=$2; shift 2; exec "$java" -cp "$LAB_CP" "$main" "$@"; }
wait_for() { for _ in $(seq 120); do curl -sf -o /dev/null "$1" && return 0; sleep 0.5; done; exit 1; }
probe() { # probe URL STREAMS INTERVAL MEASURE_S
  (launch "$JAVA17" dev.tokengap.lab.OverheadProbe --url "$1" --target x --streams "$2" --interval-ms "$3" \
    --warmup-s 3 --measure-s "$4")
}

(launch "$JAVA17" dev.tokengap.lab.StampedSseBackend --port $BACKEND_PORT) >"$OUT/backend.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$BACKEND_PORT/health"
"$JAVA17" -Xmx256m -jar "$JAR" --server.port=$TG_PORT --management.server.port=$((TG_PORT + 1)) \
  --tokengap.upstream.url=http://127.0.0.1:$BACKEND_PORT >"$OUT/tokengap.log" 2>&1 &
TG=$!; PIDS+=($TG)
wait_for "http://127.0.0.1:$((TG_PORT + 1))/actuator/health"
# shellcheck source=bench/nginx-conf.sh
. bench/nginx-conf.sh
nginx_conf "$OUT/nginx" "$NGINX_PORT" "$BACKEND_PORT" >"$OUT/nginx/nginx.conf"
nginx -c "$OUT/nginx/nginx.conf" & NG=$!; PIDS+=($NG)
wait_for "http://127.0.0.1:$NGINX_PORT/health"
NG_WORKERS=$(pgrep -P "$NG" | paste -sd' ' -)

# Warm tokengap up.
probe "http://127.0.0.1:$TG_PORT" 200 20 8 >/dev/null

trace() { # trace NAME URL PIDS... : 5 s of strace in the middle of a 50 x 20 ms run
  local name=$1 url=$2; shift 2
  probe "$url" 50 20 12 >"$OUT/$name-probe.json" &
  local p=$!
  sleep 7
  local args=()
  for pid in "$@"; do
    for tid in /proc/"$pid"/task/*; do args+=(-p "${tid##*/}"); done
    ls -l /proc/"$pid"/fd >"$OUT/$name-fd-$pid.txt" 2>/dev/null || true
  done
  # Each thread is named with -p; -f then reports the re-attach of the others (harmless).
  timeout -s INT 5 strace -f -qq -o "$OUT/$name.strace" "${args[@]}" 2>/dev/null || true
  wait $p
}
trace tokengap "http://127.0.0.1:$TG_PORT" $TG
trace nginx "http://127.0.0.1:$NGINX_PORT" $NG_WORKERS
python3 bench/strace_tally.py "$OUT" 12500 tokengap nginx | tee "$OUT/syscalls.md"

# JFR: tokengap's hot methods at 10k events/s.
probe "http://127.0.0.1:$TG_PORT" 200 20 30 >"$OUT/jfr-probe.json" &
P=$!
sleep 6
jcmd $TG JFR.start name=bench settings=profile duration=25s filename="$OUT/tokengap.jfr" \
  'jdk.ExecutionSample#period=1ms' >/dev/null
wait $P
sleep 1
"$(dirname "$JAVA25")/jfr" view --width 160 hot-methods "$OUT/tokengap.jfr" >"$OUT/hot-methods.txt"
"$(dirname "$JAVA25")/jfr" print --events jdk.ExecutionSample --stack-depth 96 "$OUT/tokengap.jfr" \
  | python3 bench/jfr_breakdown.py | tee "$OUT/cpu-breakdown.md"
"$(dirname "$JAVA25")/jfr" view --width 200 allocation-by-site "$OUT/tokengap.jfr" >"$OUT/allocation-by-site.txt" || true
"$(dirname "$JAVA25")/jfr" view gc-pauses "$OUT/tokengap.jfr" >"$OUT/gc-pauses.txt" 2>/dev/null || true

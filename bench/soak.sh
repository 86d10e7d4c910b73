#!/usr/bin/env bash
# Soak benchmark (not in CI): tokengap (the packaged jar, JDK 17, -Xmx256m,
# Netty leak detection at paranoid) in front of the simulator, under STREAMS concurrent streams
# for DURATION_S with faults: clients that cancel mid-stream (FIN or RST), slow readers, engine
# resets mid-stream (X-Sim-Reset-After), held events (X-Sim-Stall), engine errors (400, 404) and,
# every ENGINE_KILL_EVERY_S, the engine killed (SIGKILL) mid-stream and restarted. Every SAMPLE_S
# it records tokengap's heap after a full GC, open file descriptors, RSS, threads and open
# client connections; at the end the leak reports in tokengap's log and every request accounted
# for: the client's results against tokengap_requests_total and tokengap_streams_total{outcome}.
#
#   bench/soak.sh                          # 15 minutes, 500 streams; results in target/soak/
#   DURATION_S=120 bench/soak.sh           # the 2-minute smoke run
#
# Output (OUT, default target/soak): samples.jsonl (one line per sample), client.jsonl (one line
# per request), tokengap.log and simulator.log, tokengap-final.prom, and summary.json +
# summary.txt (bench/soak_report.py: first and last samples, slopes, leaks, accounting, checks).
# Loopback only; the client stops issuing requests at DURATION_S and everything is stopped by
# DURATION_S + 300 s at the latest; the trap ends every process this script started.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION_S=${DURATION_S:-900}
STREAMS=${STREAMS:-500}
SAMPLE_S=${SAMPLE_S:-10}
LEAK_LEVEL=${LEAK_LEVEL:-paranoid}
ENGINE_KILL_EVERY_S=${ENGINE_KILL_EVERY_S:-300} # 0: never kill the engine
ENGINE_DOWN_S=${ENGINE_DOWN_S:-3}
OUT=${OUT:-target/soak}
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
JCMD=${JCMD:-$(dirname "$JAVA")/jcmd}
# 512 sequences in one batch, so 500 streams run at once instead of queueing behind 64.
SIM_ARGS=${SIM_ARGS:-"--tokengap.sim.max-num-seqs=512 --tokengap.sim.num-kv-blocks=16384"}
SIM_PORT=27500 TG_PORT=27580 MGMT_PORT=27581
GRACE_S=300

[ "${REBUILD:-0}" = 1 ] && ./mvnw -q -B package -DskipTests
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

rm -rf "$OUT" && mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PIDS=()
SIM_PID= TG_PID= CLIENT_PID=
cleanup() {
  for pid in "$CLIENT_PID" "$TG_PID" "$SIM_PID" "${PIDS[@]}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'echo "soak: failed (status $?) at line $LINENO" >&2' ERR

log() { echo "soak: $(date -u +%T) $*" >&2; }

wait_for() { # wait_for URL NAME
  for _ in $(seq 120); do curl -s -o /dev/null "$1" && return 0; sleep 0.5; done
  log "$2 did not come up ($1)"; exit 1
}

start_simulator() {
  # shellcheck disable=SC2086 # SIM_ARGS are words
  "$JAVA" -Xmx512m -Dio.netty.leakDetection.level="$LEAK_LEVEL" -jar "$JAR" --tokengap.mode=simulator \
    --tokengap.sim.port=$SIM_PORT $SIM_ARGS >>"$OUT/simulator.log" 2>&1 &
  SIM_PID=$!
  wait_for "http://127.0.0.1:$SIM_PORT/v1/models" simulator
}

kill_engine() {
  log "engine: SIGKILL mid-stream (pid $SIM_PID), back in ${ENGINE_DOWN_S}s"
  kill -9 "$SIM_PID" 2>/dev/null || true
  wait "$SIM_PID" 2>/dev/null || true
  echo "{\"t\":$(date +%s),\"event\":\"engine_killed\"}" >>"$OUT/samples.jsonl"
  sleep "$ENGINE_DOWN_S"
  start_simulator
}

metric_sum() { # metric_sum NAME: the sum of a counter's series in tokengap's exposition
  curl -s "http://127.0.0.1:$MGMT_PORT/actuator/prometheus" |
    awk -v n="$1" 'index($1, n "{") == 1 || $1 == n { s += $NF } END { printf "%d\n", s }'
}

sample() { # sample [AFTER_LOAD]
  local now heap fds rss threads conns upstream
  now=$(date +%s)
  "$JCMD" "$TG_PID" GC.run >/dev/null 2>&1 || true
  # G1: " garbage-first heap   total 262144K, used 51234K [...]"
  heap=$("$JCMD" "$TG_PID" GC.heap_info 2>/dev/null | grep -m1 -o 'used [0-9]*K' | tr -dc 0-9 || true)
  fds=$(ls "/proc/$TG_PID/fd" 2>/dev/null | wc -l || true)
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$TG_PID/status" 2>/dev/null || echo 0)
  threads=$(awk '/^Threads/ { print $2 }' "/proc/$TG_PID/status" 2>/dev/null || echo 0)
  conns=$(ss -Htn state established "( sport = :$TG_PORT )" 2>/dev/null | wc -l)
  # tokengap's pool keeps idle connections to the engine open: fds a leak check must allow for
  upstream=$(ss -Htn state established "( dport = :$SIM_PORT )" 2>/dev/null | wc -l)
  echo "{\"t\":$now,\"elapsed_s\":$((now - START)),\"heap_used_after_gc_kb\":${heap:-null},\"fds\":$fds,\"rss_kb\":${rss:-0},\"threads\":${threads:-0},\"client_connections\":$conns,\"upstream_connections\":$upstream,\"after_load\":${1:-false}}" >>"$OUT/samples.jsonl"
}

log "machine $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION_S}s, $STREAMS streams, leak detection $LEAK_LEVEL"
"$JAVA" -version 2>&1 | head -n 1 >"$OUT/jdk.txt"
start_simulator
"$JAVA" -Xmx256m -Dio.netty.leakDetection.level="$LEAK_LEVEL" -jar "$JAR" --server.port=$TG_PORT \
  --management.server.port=$MGMT_PORT --tokengap.upstream.url=http://127.0.0.1:$SIM_PORT \
  >"$OUT/tokengap.log" 2>&1 &
TG_PID=$!
wait_for "http://127.0.0.1:$MGMT_PORT/actuator/health" tokengap

START=$(date +%s)
sample
python3 bench/soak_client.py --port $TG_PORT --streams "$STREAMS" --duration-s "$DURATION_S" \
  --out "$OUT/client.jsonl" >"$OUT/client-summary.json" 2>"$OUT/client.log" &
CLIENT_PID=$!
NEXT_KILL=$((START + ENGINE_KILL_EVERY_S))
while kill -0 "$CLIENT_PID" 2>/dev/null; do
  now=$(date +%s)
  if [ "$ENGINE_KILL_EVERY_S" -gt 0 ] && [ "$now" -ge "$NEXT_KILL" ] && [ "$now" -lt $((START + DURATION_S - 30)) ]; then
    kill_engine
    NEXT_KILL=$((NEXT_KILL + ENGINE_KILL_EVERY_S))
  fi
  if [ "$now" -ge $((START + DURATION_S + GRACE_S)) ]; then
    log "client still running ${GRACE_S}s after the end: stopping it"
    kill "$CLIENT_PID" 2>/dev/null || true
    break
  fi
  sample
  progress=$(tail -n 1 "$OUT/client.log" 2>/dev/null | cut -c1-200)
  [ "$progress" != "${last_progress:-}" ] && echo "$progress" >&2
  last_progress=$progress
  sleep "$SAMPLE_S"
done
wait "$CLIENT_PID" 2>/dev/null || log "client exited with status $?"
CLIENT_PID=

# Outcomes are recorded when each stream ends: wait until tokengap's counts stop moving.
last=-1
for _ in $(seq 30); do
  streams=$(metric_sum tokengap_streams_total)
  [ "$streams" = "$last" ] && break
  last=$streams
  sleep 2
done
sample true
curl -s "http://127.0.0.1:$MGMT_PORT/actuator/prometheus" >"$OUT/tokengap-final.prom"
grep -c 'LEAK:' "$OUT/tokengap.log" >"$OUT/leaks-tokengap.txt" || true
grep -c 'LEAK:' "$OUT/simulator.log" >"$OUT/leaks-simulator.txt" || true
python3 bench/soak_report.py "$OUT" | tee "$OUT/summary.txt"

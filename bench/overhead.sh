#!/usr/bin/env bash
# Proxy overhead benchmark: the one-way delay each proxy adds to every SSE event, its
# CPU per event, its peak RSS and how often it coalesces events, against a direct connection.
#
#   bench/overhead.sh            # ~15 minutes; results in target/overhead/
#
# Targets, alternated A B C A B C in one run so drift on a shared machine hits each alike:
#   direct    probe -> stamped backend
#   tokengap  probe -> tokengap (the packaged jar, JDK 17, G1, a fixed 256 MiB heap) -> backend
#   nginx     probe -> nginx (proxy_buffering off, HTTP/1.1 keep-alive upstream) -> backend
# Loads (streams x gap between events): 50 x 20 ms (2.5k events/s), 200 x 20 ms (10k/s),
# 1000 x 50 ms (20k/s). Then tokengap on JDK 25 with G1 against generational ZGC.
# Loopback only; every run asks for a fixed number of events and stops by itself.
#
# Then request churn: a client and a backend that are not tokengap's code
# (bench/churn/client.mjs, backend.mjs: Node, raw sockets, hand-written HTTP/1.1), with their own
# tokengap (the same jar, JDK 17, the same heap, defaults) and nginx (the same config) in front of the
# Node backend, the same targets alternated the same way. Scenarios (CHURN, words):
#   fixed:N    CHURN_CONCURRENCY streams always in flight, each of N tokens; a new request starts
#              on the freed connection as one ends (fixed:100 ~ 100 requests/s, fixed:1000 ~ 10/s)
#   fixed:N@C/I  the same with C streams in flight, I ms between a stream's events (the request
#              asks the backend for that cadence), e.g. fixed:200@1000/200 for 1,000 slow streams
#   mix:A-B    Poisson arrivals at MIX_RATE streams/s, max_tokens uniform in [A, B] (~200 in flight)
#   rate:R     R non-streaming chat completions/s, evenly spaced, latency from the intended send
# Raw lines in $OUT/churn.jsonl, tables and verdicts in $OUT/churn-report.md (bench/churn_report.py).
#
# Environment [defaults]:
#   OUT [target/overhead]  MEASURE_S [20]  WARMUP_S [3]  ROUNDS [2]  JAVA17  JAVA25
#   HEAP ["-Xms256m -Xmx256m"]  the heap flags of every JVM target
#   PRIORITIES ["-XX:ThreadPriorityPolicy=1 -XX:CompilerThreadPriority=10"]  the image's thread
#               priority flags, for every JVM target ("" leaves Java's priorities unmapped)
#   JVM_UID [10001]  the user every JVM target runs as when the script runs as root, as the image
#               runs tokengap ("" runs them as the caller)
#   LOADS ["50:20 200:20 1000:50"]  long streams, Java probe and backend; "" skips that whole part
#                                   (the GC comparison too)
#   GC_LOADS ["200:20 1000:50"]     tokengap on JDK 25, G1 against ZGC; "" skips it
#   CHURN ["fixed:100 fixed:1000 mix:64-512 rate:500 rate:2000"]  "" skips the churn part
#   CHURN_CONCURRENCY [200]  MIX_RATE [35]  CHURN_INTERVAL_MS [20] (the Node backend's token gap)
#   CHURN_SPREAD_MS [0]  the backend's --spread-ms: 0 keeps streams started together ticking
#                        together (events in bursts), the interval spreads their phases
#   NODE [node]  TUNED_FLAGS, BEFORE_JAR: extra tokengap targets (see below), in both parts
#   TG_FLAGS [""]  JVM flags of the tokengap target itself (e.g. an AOT cache: bench/aot-train.sh)
#   FLOOR [""]  churn only: words among "tcp http", each a target netty-tcp / netty-http, the
#               least a Netty program does to proxy this traffic (bench/bare/NettyFloorProxy.java,
#               JDK 17, the same heap, 2 event loops): the floor under any tokengap on Reactor Netty.
#               A word with "+tuned" (e.g. http+tuned, target netty-http-tuned) runs that floor
#               with the Netty settings tokengap's main method sets (TokengapApplication.nettyDefaults:
#               no leak detection, the pooled allocator); without it the floor has Netty's defaults.
#               The word "reactor" (target netty-reactor) is the floor of tokengap's own stack:
#               Reactor Netty's HttpServer to its pooled HttpClient on colocated loops, each read
#               flushed, nothing measured, with tokengap's Netty settings (bench/bare/ReactorNettyRelay.java)
#
#   LOADS="" CHURN="fixed:100 rate:500" bench/overhead.sh     # the churn scenarios only
#   LOADS="" FLOOR=reactor CHURN="fixed:100 fixed:1000 mix:64-512 fixed:200@1000/200 rate:500" \
#     bench/overhead.sh                                       # every scenario in one run
set -Eeuo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/overhead}
MEASURE_S=${MEASURE_S:-20}
WARMUP_S=${WARMUP_S:-3}
ROUNDS=${ROUNDS:-2}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
JAVA25=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
BACKEND_PORT=27100 TG_PORT=27180 NGINX_PORT=27200 G1_PORT=27280 ZGC_PORT=27380
LOADS=${LOADS-"50:20 200:20 1000:50"}
GC_LOADS=${GC_LOADS-"200:20 1000:50"}
# JVM flags of an optional fourth target, tokengap-tuned (same jar, same JDK 17, same heap).
TUNED_FLAGS=${TUNED_FLAGS:-}
# Every JVM target's heap (tokengap's and the floors'): fixed at 256 MiB, as the image and the chart
# pin tokengap's (-XX:InitialRAMPercentage=40 -XX:MaxRAMPercentage=40 -XX:MaxHeapFreeRatio=100).
# Left to itself, G1 shrinks tokengap's heap at start-up and collects twice as often.
HEAP=${HEAP:-"-Xms256m -Xmx256m"}
# Every JVM target's thread priorities as the image's entrypoint sets them (the JIT's compiler
# threads at nice 10, everything else at 0), and its user: the image runs tokengap as UID 10001,
# which may lower its threads' priority but not raise it. Run as root, the same flags would raise
# the JVM's own threads (GC and VM threads to nice -4) above the event loops.
PRIORITIES=${PRIORITIES-"-XX:ThreadPriorityPolicy=1 -XX:CompilerThreadPriority=10"}
JVM_UID=${JVM_UID-10001}
AS_JVM_USER=()
[ "$(id -u)" = 0 ] && [ -n "$JVM_UID" ] && AS_JVM_USER=(setpriv --reuid="$JVM_UID" --regid="$JVM_UID" --clear-groups)
# JVM flags of the tokengap target itself (none unless given: the jar as `java -jar` runs it),
# e.g. an AOT cache to compare with another one as tokengap-tuned.
TG_FLAGS=${TG_FLAGS:-}
TUNED_PORT=27480
# An earlier build of tokengap as another target, tokengap-before (same JDK 17, same heap): before
# against after in one run.
BEFORE_JAR=${BEFORE_JAR:-}
BEFORE_PORT=27580
# The churn part's own Node backend, tokengap (and tuned, before) and nginx.
CHURN=${CHURN-"fixed:100 fixed:1000 mix:64-512 rate:500 rate:2000"}
CHURN_CONCURRENCY=${CHURN_CONCURRENCY:-200}
MIX_RATE=${MIX_RATE:-35}
CHURN_INTERVAL_MS=${CHURN_INTERVAL_MS:-20}
CHURN_SPREAD_MS=${CHURN_SPREAD_MS:-0}
# Seconds of unrecorded warm-up per target before each churn scenario, under that scenario's load
# (JIT: a JVM proxy runs for days).
CHURN_WARMUP_S=${CHURN_WARMUP_S:-20}
NODE=${NODE:-node}
CB_PORT=27600 CTG_PORT=27680 CNGINX_PORT=27700 CTUNED_PORT=27780 CBEFORE_PORT=27880
FLOOR=${FLOOR:-}

ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
# The lab harness (dev.tokengap.lab, test sources: not in the jar) runs from the test classpath.
[ -f target/test-classpath.txt ] && [ -f target/test-classes/dev/tokengap/lab/OverheadProbe.class ] \
  || ./mvnw -q -B test-compile dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
LAB_CP="$PWD/target/test-classes:$PWD/target/classes:$(cat target/test-classpath.txt)"
if [ -n "$CHURN" ] && ! command -v "$NODE" >/dev/null 2>&1; then
  echo "overhead: the churn scenarios need Node ($NODE), or CHURN=\"\"" >&2; exit 1
fi
command -v nginx >/dev/null 2>&1 || {
  echo "overhead: installing Debian's nginx"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

rm -rf "$OUT" && mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RESULTS="$OUT/results.jsonl"
CHURN_RESULTS="$OUT/churn.jsonl"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "overhead: failed (status $?) at line $LINENO" >&2' ERR

launch() { # launch JAVA MAIN ARGS... : a main of the lab harness (not the Spring app), in place
  local java=$1 main=$2; shift 2
  exec "$java" -cp "$LAB_CP" "$main" "$@"
}

start_tokengap() { # [UPSTREAM_PORT=..] start_tokengap NAME JAVA PORT JVM-FLAGS...
  local name=$1 java=$2 port=$3; shift 3
  ports_free "$port" $((port + 1))
  "${AS_JVM_USER[@]}" "$java" $HEAP $PRIORITIES "$@" -jar "${START_JAR:-$JAR}" --server.port="$port" --management.server.port=$((port + 1)) \
    --tokengap.upstream.url=http://127.0.0.1:${UPSTREAM_PORT:-$BACKEND_PORT} >"$OUT/$name.log" 2>&1 &
  PIDS+=($!)
  eval "${name}_PID=$!"
  wait_for "http://127.0.0.1:$((port + 1))/actuator/health" "$name"
}

ports_free() { # ports_free PORT...: another tenant's server on a port would answer our health checks
  local port
  for port in "$@"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "overhead: port $port is already taken (another run on this machine?)" >&2; exit 1
    fi
  done
}

wait_for() {
  for _ in $(seq 120); do curl -sf -o /dev/null "$1" && return 0; sleep 0.5; done
  echo "overhead: $2 did not come up ($1)" >&2; exit 1
}

probe() { # probe TARGET URL STREAMS INTERVAL ROUND SESSION PIDS [MEASURE_S]
  echo "overhead: $(date +%T) $6 round $5: $1, $3 streams x $4 ms" >&2
  (launch "$JAVA17" dev.tokengap.lab.OverheadProbe --url "$2" --target "$1" --streams "$3" \
    --interval-ms "$4" --round "$5" --session "$6" --pids "$7" --warmup-s "$WARMUP_S" \
    --measure-s "${8:-$MEASURE_S}" --out "$RESULTS") | cut -c1-240
}

# nginx, as a streaming reverse proxy is meant to be configured for SSE.
# shellcheck source=bench/nginx-conf.sh
. bench/nginx-conf.sh
start_nginx() { # start_nginx NAME PORT UPSTREAM_PORT: sets NAME_MASTER and NAME_PIDS (master,workers)
  local name=$1 port=$2 upstream=$3 dir="$OUT/$1"
  ports_free "$port"
  mkdir -p "$dir"
  nginx_conf "$dir" "$port" "$upstream" >"$dir/nginx.conf"
  nginx -c "$dir/nginx.conf" &
  local master=$!
  PIDS+=($master)
  wait_for "http://127.0.0.1:$port/health" "$name"
  eval "${name}_MASTER=$master"
  eval "${name}_PIDS=$master,$(pgrep -P "$master" | paste -sd, -)"
}

echo "overhead: machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
# Netfilter's connection tracking (Docker's engine loads it, and its rules stay after the engine
# stops) raised every proxy's cost per request 1.7 to 2 times (measured 4 December 2026): record it, at
# the start and at the end. Packets are tracked while rules hook netfilter; the module can stay
# loaded with old entries after the rules are flushed (nft flush ruleset), so both are recorded.
netfilter_state() {
  local tracking chains=unknown
  if [ -r /proc/sys/net/netfilter/nf_conntrack_count ]; then
    tracking="loaded ($(cat /proc/sys/net/netfilter/nf_conntrack_count) entries)"
  else
    tracking="not loaded"
  fi
  command -v nft >/dev/null && chains=$(nft list ruleset 2>/dev/null | grep -c 'type .* hook' || true)
  echo "connection tracking $tracking, netfilter chains with a hook: $chains, Docker's engine $(pgrep -x dockerd >/dev/null && echo running || echo not running)"
}
echo "overhead: at the start: $(netfilter_state)" | tee "$OUT/netfilter.txt"

long_streams() { # the Java probe against the Java backend, direct and through the proxies
  ports_free $BACKEND_PORT
  # The stamped backend.
  (launch "$JAVA17" dev.tokengap.lab.StampedSseBackend --port $BACKEND_PORT) >"$OUT/backend.log" 2>&1 &
  PIDS+=($!)
  wait_for "http://127.0.0.1:$BACKEND_PORT/health" backend
  start_nginx nginx $NGINX_PORT $BACKEND_PORT

  # shellcheck disable=SC2086 # the flags are words
  start_tokengap tokengap "$JAVA17" $TG_PORT $TG_FLAGS
  "$JAVA17" -version 2>&1 | head -n 1 >"$OUT/jdk17.txt"
  if [ -n "$TUNED_FLAGS" ]; then
    # shellcheck disable=SC2086 # the flags are words
    start_tokengap tuned "$JAVA17" $TUNED_PORT $TUNED_FLAGS
    echo "$TUNED_FLAGS" >"$OUT/tuned-flags.txt"
    RESULTS=/dev/null probe warmup "http://127.0.0.1:$TUNED_PORT" 200 20 0 warmup "" 8 >/dev/null
  fi

  if [ -n "$BEFORE_JAR" ]; then
    START_JAR=$BEFORE_JAR start_tokengap before "$JAVA17" $BEFORE_PORT
    echo "$BEFORE_JAR" >"$OUT/before-jar.txt"
    RESULTS=/dev/null probe warmup "http://127.0.0.1:$BEFORE_PORT" 200 20 0 warmup "" 8 >/dev/null
  fi

  # Warm-up (not recorded): JIT both JVMs' paths and nginx's connection pool.
  for url in "http://127.0.0.1:$TG_PORT" "http://127.0.0.1:$NGINX_PORT" "http://127.0.0.1:$BACKEND_PORT"; do
    RESULTS=/dev/null probe warmup "$url" 200 20 0 warmup "" 8 >/dev/null
  done

  for load in $LOADS; do
    streams=${load%%:*} interval=${load##*:}
    for round in $(seq "$ROUNDS"); do
      probe direct "http://127.0.0.1:$BACKEND_PORT" "$streams" "$interval" "$round" main ""
      probe tokengap "http://127.0.0.1:$TG_PORT" "$streams" "$interval" "$round" main "$tokengap_PID"
      probe nginx "http://127.0.0.1:$NGINX_PORT" "$streams" "$interval" "$round" main "$nginx_PIDS"
      if [ -n "$TUNED_FLAGS" ]; then
        probe tokengap-tuned "http://127.0.0.1:$TUNED_PORT" "$streams" "$interval" "$round" main "$tuned_PID"
      fi
      if [ -n "$BEFORE_JAR" ]; then
        probe tokengap-before "http://127.0.0.1:$BEFORE_PORT" "$streams" "$interval" "$round" main "$before_PID"
      fi
    done
  done
  curl -s "http://127.0.0.1:$((TG_PORT + 1))/actuator/prometheus" >"$OUT/tokengap-main.prom"
  kill "$tokengap_PID"; kill -QUIT "$nginx_MASTER"
  [ -n "$TUNED_FLAGS" ] && kill "$tuned_PID"
  [ -n "$BEFORE_JAR" ] && kill "$before_PID"
  if [ -z "$GC_LOADS" ]; then
    python3 bench/overhead_report.py "$RESULTS" | tee "$OUT/report.md"
    return
  fi

  # G1 against generational ZGC (the only ZGC on JDK 25), both tokengap on JDK 25.
  start_tokengap g1 "$JAVA25" $G1_PORT -XX:+UseG1GC
  start_tokengap zgc "$JAVA25" $ZGC_PORT -XX:+UseZGC
  "$JAVA25" -version 2>&1 | head -n 1 >"$OUT/jdk25.txt"
  for url in "http://127.0.0.1:$G1_PORT" "http://127.0.0.1:$ZGC_PORT"; do
    RESULTS=/dev/null probe warmup "$url" 200 20 0 warmup "" 8 >/dev/null
  done
  for load in $GC_LOADS; do
    streams=${load%%:*} interval=${load##*:}
    for round in $(seq "$ROUNDS"); do
      probe direct "http://127.0.0.1:$BACKEND_PORT" "$streams" "$interval" "$round" gc ""
      probe tokengap-jdk25-g1 "http://127.0.0.1:$G1_PORT" "$streams" "$interval" "$round" gc "$g1_PID"
      probe tokengap-jdk25-zgc "http://127.0.0.1:$ZGC_PORT" "$streams" "$interval" "$round" gc "$zgc_PID"
    done
  done

  python3 bench/overhead_report.py "$RESULTS" | tee "$OUT/report.md"
}

FLOOR_PIDS=()
start_floor() { # start_floor NAME MODE[+tuned] PORT: the Netty floor proxy in front of the churn backend; sets floor_PID
  local name=$1 mode=$2 port=$3
  ports_free "$port"
  [ -s target/bare-classpath.txt ] || ./mvnw -q -B dependency:build-classpath -Dmdep.outputFile=target/bare-classpath.txt
  local program=NettyFloorProxy
  [ "$mode" = reactor ] && program=ReactorNettyRelay
  local classpath
  classpath=$(cat target/bare-classpath.txt)
  if [ ${#AS_JVM_USER[@]} -gt 0 ]; then # the JVM's user may not read the Maven repository: a copy
    rm -rf target/bare-lib && mkdir -p target/bare-lib
    tr ':' '\n' <target/bare-classpath.txt | xargs cp -t target/bare-lib
    classpath="$PWD/target/bare-lib/*"
  fi
  "${AS_JVM_USER[@]}" "$JAVA17" $HEAP $PRIORITIES -cp "$classpath" "bench/bare/$program.java" "$mode" "$port" "$CB_PORT" \
    >"$OUT/$name.log" 2>&1 &
  floor_PID=$!
  PIDS+=($floor_PID)
  FLOOR_PIDS+=($floor_PID)
  for _ in $(seq 120); do grep -qs "$program" "$OUT/$name.log" && return 0; sleep 0.5; done
  echo "overhead: $name did not come up" >&2; exit 1
}

churn_client() { # churn_client TARGET URL SCENARIO ROUND SESSION PIDS [OUT] [MEASURE_S]
  local kind=${3%%:*} arg=${3#*:} mode interval=$CHURN_INTERVAL_MS concurrency=$CHURN_CONCURRENCY
  if [[ $kind == fixed && $arg == *@* ]]; then
    local shape=${arg#*@}
    concurrency=${shape%/*} interval=${shape#*/} arg=${arg%%@*}
    if ! [[ $concurrency =~ ^[1-9][0-9]*$ && $interval =~ ^[1-9][0-9]*$ ]]; then
      echo "overhead: '$3': fixed:N@C/I wants C streams and I ms, both positive integers" >&2; exit 1
    fi
  fi
  case $kind in
    fixed) mode=(--mode fixed --concurrency "$concurrency" --tokens "$arg") ;;
    mix) mode=(--mode mix --rate "$MIX_RATE" --min-tokens "${arg%-*}" --max-tokens "${arg#*-}") ;;
    rate) mode=(--mode rate --rate "$arg") ;;
    *) echo "overhead: unknown churn scenario '$3' (fixed:N, fixed:N@C/I, mix:A-B, rate:R)" >&2; exit 1 ;;
  esac
  echo "overhead: $(date +%T) $5 round $4: $1, $3" >&2
  # The same seed for every target of a round: the same arrivals and lengths.
  "$NODE" bench/churn/client.mjs --url "$2" --target "$1" "${mode[@]}" --interval-ms "$interval" \
    --seed $((12 + $4)) --round "$4" --session "$5" --pids "$6" --backend-pids "$churn_backend_PID" \
    --warmup-s "$WARMUP_S" --measure-s "${8:-$MEASURE_S}" --out "${7:-$CHURN_RESULTS}"
}

churn() { # request churn: the Node client against the Node backend, direct and through the proxies
  ports_free $CB_PORT
  "$NODE" bench/churn/backend.mjs --port $CB_PORT --interval-ms "$CHURN_INTERVAL_MS" --spread-ms "$CHURN_SPREAD_MS" >"$OUT/churn-backend.log" 2>&1 &
  churn_backend_PID=$!
  PIDS+=($churn_backend_PID)
  wait_for "http://127.0.0.1:$CB_PORT/health" churn-backend
  "$NODE" --version >"$OUT/node.txt"
  start_nginx cnginx $CNGINX_PORT $CB_PORT
  # shellcheck disable=SC2086 # the flags are words
  UPSTREAM_PORT=$CB_PORT start_tokengap ctokengap "$JAVA17" $CTG_PORT $TG_FLAGS
  local targets=("tokengap http://127.0.0.1:$CTG_PORT $ctokengap_PID" "nginx http://127.0.0.1:$CNGINX_PORT $cnginx_PIDS")
  if [ -n "$TUNED_FLAGS" ]; then
    # shellcheck disable=SC2086 # the flags are words
    UPSTREAM_PORT=$CB_PORT start_tokengap ctuned "$JAVA17" $CTUNED_PORT $TUNED_FLAGS
    targets+=("tokengap-tuned http://127.0.0.1:$CTUNED_PORT $ctuned_PID")
  fi
  if [ -n "$BEFORE_JAR" ]; then
    UPSTREAM_PORT=$CB_PORT START_JAR=$BEFORE_JAR start_tokengap cbefore "$JAVA17" $CBEFORE_PORT
    targets+=("tokengap-before http://127.0.0.1:$CBEFORE_PORT $cbefore_PID")
  fi
  local mode port=27980
  for mode in $FLOOR; do
    start_floor "netty-${mode/+/-}" "$mode" $port
    targets+=("netty-${mode/+/-} http://127.0.0.1:$port $floor_PID")
    port=$((port + 10))
  done
  local t name url pids
  for scenario in $CHURN; do
    # Warm-up (not recorded): every target under this scenario's own load for CHURN_WARMUP_S
    # before its rounds, so that what is measured is the steady state of a proxy that has been
    # serving this load (a JVM's JIT compiles what the load runs: stream starts at 500
    # requests/s, spikes and their attribution at 1,000 slow streams). For 1,000 streams of
    # 200 tokens at 200 ms (40 s each) give it 60 s or more, so that streams have ended in it.
    for t in "${targets[@]}" "direct http://127.0.0.1:$CB_PORT"; do
      read -r name url pids <<<"$t"
      churn_client warmup "$url" "$scenario" 0 warmup "" /dev/null "$CHURN_WARMUP_S"
    done
    for round in $(seq "$ROUNDS"); do
      churn_client direct "http://127.0.0.1:$CB_PORT" "$scenario" "$round" churn ""
      for t in "${targets[@]}"; do
        read -r name url pids <<<"$t"
        churn_client "$name" "$url" "$scenario" "$round" churn "$pids"
      done
    done
  done
  curl -s "http://127.0.0.1:$((CTG_PORT + 1))/actuator/prometheus" >"$OUT/tokengap-churn.prom"
  curl -s "http://127.0.0.1:$CB_PORT/stats" >"$OUT/churn-backend-stats.json"
  kill "$ctokengap_PID" "$churn_backend_PID"; kill -QUIT "$cnginx_MASTER"
  [ -n "$TUNED_FLAGS" ] && kill "$ctuned_PID"
  [ -n "$BEFORE_JAR" ] && kill "$cbefore_PID"
  [ -n "$FLOOR" ] && kill "${FLOOR_PIDS[@]}"
  python3 bench/churn_report.py "$CHURN_RESULTS" | tee "$OUT/churn-report.md"
}

if [ -n "$LOADS" ]; then long_streams; fi
if [ -n "$CHURN" ]; then churn; fi
echo "overhead: at the end: $(netfilter_state)" | tee -a "$OUT/netfilter.txt"

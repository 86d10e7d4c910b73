#!/usr/bin/env bash
# Proxy overhead benchmark (issue #5): the one-way delay each proxy adds to every SSE event, its
# CPU per event, its peak RSS and how often it coalesces events, against a direct connection.
#
#   bench/overhead.sh            # ~15 minutes; results in target/overhead/
#
# Targets, alternated A B C A B C in one session so drift on a shared machine hits each alike:
#   direct    probe -> stamped backend
#   tokengap  probe -> tokengap (the packaged jar, JDK 17, G1, -Xmx256m) -> backend
#   nginx     probe -> nginx (proxy_buffering off, HTTP/1.1 keep-alive upstream) -> backend
# Loads (streams x gap between events): 50 x 20 ms (2.5k events/s), 200 x 20 ms (10k/s),
# 1000 x 50 ms (20k/s). Then tokengap on JDK 25 with G1 against generational ZGC.
# Loopback only; every run asks for a fixed number of events and stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/overhead}
MEASURE_S=${MEASURE_S:-20}
WARMUP_S=${WARMUP_S:-3}
ROUNDS=${ROUNDS:-2}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
JAVA25=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
BACKEND_PORT=27100 TG_PORT=27180 NGINX_PORT=27200 G1_PORT=27280 ZGC_PORT=27380
LOADS=${LOADS:-"50:20 200:20 1000:50"}
GC_LOADS=${GC_LOADS-"200:20 1000:50"}
# JVM flags of an optional fourth target, tokengap-tuned (same jar, same JDK 17, -Xmx256m).
TUNED_FLAGS=${TUNED_FLAGS:-}
TUNED_PORT=27480
# An earlier build of tokengap as another target, tokengap-before (same JDK 17, -Xmx256m): before
# against after in one session.
BEFORE_JAR=${BEFORE_JAR:-}
BEFORE_PORT=27580

ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
# The lab harness (dev.tokengap.lab, test sources: not in the jar) runs from the test classpath.
[ -f target/test-classpath.txt ] && [ -f target/test-classes/dev/tokengap/lab/OverheadProbe.class ] \
  || ./mvnw -q -B test-compile dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
LAB_CP="$PWD/target/test-classes:$PWD/target/classes:$(cat target/test-classpath.txt)"
command -v nginx >/dev/null 2>&1 || {
  echo "overhead: installing Debian's nginx"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

rm -rf "$OUT" && mkdir -p "$OUT/nginx"
OUT=$(cd "$OUT" && pwd)
RESULTS="$OUT/results.jsonl"
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

start_tokengap() { # start_tokengap NAME JAVA PORT JVM-FLAGS...
  local name=$1 java=$2 port=$3; shift 3
  "$java" -Xmx256m "$@" -jar "${START_JAR:-$JAR}" --server.port="$port" --management.server.port=$((port + 1)) \
    --tokengap.upstream.url=http://127.0.0.1:$BACKEND_PORT >"$OUT/$name.log" 2>&1 &
  PIDS+=($!)
  eval "${name}_PID=$!"
  wait_for "http://127.0.0.1:$((port + 1))/actuator/health" "$name"
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

echo "overhead: machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"

# The stamped backend.
(launch "$JAVA17" dev.tokengap.lab.StampedSseBackend --port $BACKEND_PORT) >"$OUT/backend.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$BACKEND_PORT/health" backend

# nginx, as a streaming reverse proxy is meant to be configured for SSE.
cat >"$OUT/nginx/nginx.conf" <<NGINX
worker_processes auto;
worker_rlimit_nofile 16384;
pid $OUT/nginx/nginx.pid;
error_log $OUT/nginx/error.log warn;
daemon off;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $OUT/nginx/body;
  proxy_temp_path $OUT/nginx/proxy;
  fastcgi_temp_path $OUT/nginx/fastcgi;
  uwsgi_temp_path $OUT/nginx/uwsgi;
  scgi_temp_path $OUT/nginx/scgi;
  upstream backend { server 127.0.0.1:$BACKEND_PORT; keepalive 1024; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 300s;
    }
  }
}
NGINX
nginx -c "$OUT/nginx/nginx.conf" &
NGINX_MASTER=$!
PIDS+=($NGINX_MASTER)
wait_for "http://127.0.0.1:$NGINX_PORT/health" nginx
NGINX_PIDS=$(pgrep -P "$NGINX_MASTER" | paste -sd, -)
NGINX_PIDS="$NGINX_MASTER,$NGINX_PIDS"

start_tokengap tokengap "$JAVA17" $TG_PORT
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
    probe nginx "http://127.0.0.1:$NGINX_PORT" "$streams" "$interval" "$round" main "$NGINX_PIDS"
    if [ -n "$TUNED_FLAGS" ]; then
      probe tokengap-tuned "http://127.0.0.1:$TUNED_PORT" "$streams" "$interval" "$round" main "$tuned_PID"
    fi
    if [ -n "$BEFORE_JAR" ]; then
      probe tokengap-before "http://127.0.0.1:$BEFORE_PORT" "$streams" "$interval" "$round" main "$before_PID"
    fi
  done
done
curl -s "http://127.0.0.1:$((TG_PORT + 1))/actuator/prometheus" >"$OUT/tokengap-main.prom"
kill "$tokengap_PID"; kill -QUIT "$NGINX_MASTER"
[ -n "$TUNED_FLAGS" ] && kill "$tuned_PID"
[ -n "$BEFORE_JAR" ] && kill "$before_PID"
if [ -z "$GC_LOADS" ]; then
  python3 bench/overhead_report.py "$RESULTS" | tee "$OUT/report.md"
  exit 0
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

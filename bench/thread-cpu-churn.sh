#!/usr/bin/env bash
# CPU per thread group of one or more proxies under one churn load (bench/churn/, Node), then
# idle: which threads a request or an event costs and which cost per second.
#
#   bench/thread-cpu-churn.sh OUT_DIR [JAR | relay ...]     # default: the packaged jar
#
# Each target runs in turn (ROUNDS times, alternated A B A B), in front of the Node churn backend
# (which serves a small vLLM /metrics, so the engine scraper works as it does in front of vLLM):
# a tokengap jar, or "relay", the bare Reactor Netty relay (bench/bare/ReactorNettyRelay.java),
# every JVM as bench/overhead.sh starts it (HEAP, PRIORITIES, as UID JVM_UID when root). The load
# (LOAD, the churn client's arguments; default RATE non-streaming requests/s) runs WARMUP_S
# unrecorded seconds and DURATION_S measured ones, sampled every 20 s by bench/thread_cpu.py,
# then 20 s with no load. Raw samples in OUT_DIR/<name>-r<round>.txt (load) and -idle.txt; a
# summary of the last LAST_N load intervals per thread group is printed at the end. For example,
# 1,000 streams of 200 tokens at 200 ms, two builds and the relay:
#
#   LOAD="--mode fixed --concurrency 1000 --tokens 200" INTERVAL_MS=200 WARMUP_S=120 \
#     DURATION_S=120 LAST_N=6 bench/thread-cpu-churn.sh target/threads new.jar old.jar relay
#
# Environment [defaults]: RATE [500]  LOAD [--mode rate --rate RATE]  INTERVAL_MS [20]
#   WARMUP_S [3]  DURATION_S [120]  ROUNDS [2]  LAST_N [3]  HEAP  PRIORITIES  JVM_UID  JAVA17  NODE
set -Eeuo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); shift
mkdir -p "$out"
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
RATE=${RATE:-500}
LOAD=${LOAD:-"--mode rate --rate $RATE"}
INTERVAL_MS=${INTERVAL_MS:-20}
WARMUP_S=${WARMUP_S:-3}
DURATION_S=${DURATION_S:-120}
HEAP=${HEAP:-"-Xms256m -Xmx256m"}
PRIORITIES=${PRIORITIES-"-XX:ThreadPriorityPolicy=1 -XX:CompilerThreadPriority=10"}
JVM_UID=${JVM_UID-10001}
AS_JVM_USER=()
[ "$(id -u)" = 0 ] && [ -n "$JVM_UID" ] && AS_JVM_USER=(setpriv --reuid="$JVM_UID" --regid="$JVM_UID" --clear-groups)
ROUNDS=${ROUNDS:-2}
LAST_N=${LAST_N:-3}
jars=("$@")
if [ ${#jars[@]} -eq 0 ]; then
  ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
  jars=("$(ls target/tokengap-*.jar | head -n 1)")
fi
for port in 27600 27680 27681; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "thread-cpu-churn: port $port is already taken (another run on this machine?)" >&2
    exit 1
  fi
done
"$NODE" bench/churn/backend.mjs --port 27600 --interval-ms 20 >"$out/backend.log" 2>&1 &
backend=$!
proxy=
trap 'kill $proxy $backend 2>/dev/null || true' EXIT
relay_cp=
if printf '%s\n' "${jars[@]}" | grep -qx relay; then # the relay's classpath, readable by JVM_UID
  [ -s target/bare-classpath.txt ] || ./mvnw -q -B dependency:build-classpath -Dmdep.outputFile=target/bare-classpath.txt
  rm -rf target/bare-lib && mkdir -p target/bare-lib
  tr ':' '\n' <target/bare-classpath.txt | xargs cp -t target/bare-lib
  relay_cp="$PWD/target/bare-lib/*"
fi
for round in $(seq 1 "$ROUNDS"); do
  for jar in "${jars[@]}"; do
    if [ "$jar" = relay ]; then
      name=relay
      "${AS_JVM_USER[@]}" "$JAVA17" $HEAP $PRIORITIES -cp "$relay_cp" bench/bare/ReactorNettyRelay.java reactor 27680 27600 \
        >"$out/$name-r$round.log" 2>&1 &
      proxy=$!
      until grep -qs ReactorNettyRelay "$out/$name-r$round.log"; do sleep 0.5; done
    else
      name=$(basename "$jar" .jar)
      "${AS_JVM_USER[@]}" "$JAVA17" $HEAP $PRIORITIES -jar "$jar" --server.port=27680 --management.server.port=27681 \
        --tokengap.upstream.url=http://127.0.0.1:27600 >"$out/$name-r$round.log" 2>&1 &
      proxy=$!
      until curl -sf http://127.0.0.1:27681/actuator/health >/dev/null; do sleep 0.5; done
    fi
    # shellcheck disable=SC2086 # LOAD is a list of arguments
    "$NODE" bench/churn/client.mjs --url http://127.0.0.1:27680 --target "$name" $LOAD \
      --interval-ms "$INTERVAL_MS" --seed 13 --round "$round" --session thread-cpu --pids $proxy --backend-pids $backend \
      --warmup-s "$WARMUP_S" --measure-s "$DURATION_S" --out "$out/churn.jsonl" >>"$out/client.log" 2>&1 &
    client=$!
    THREAD_CPU_MIN=0 python3 bench/thread_cpu.py $proxy 20 $(((WARMUP_S + DURATION_S) / 20)) >"$out/$name-r$round.txt"
    wait $client
    THREAD_CPU_MIN=0 python3 bench/thread_cpu.py $proxy 20 1 >"$out/$name-r$round-idle.txt"
    kill $proxy; wait $proxy 2>/dev/null || true
    proxy=
  done
done
kill $backend 2>/dev/null || true
trap - EXIT
python3 - "$out" "$LAST_N" "$LOAD" <<'EOF'
import collections, glob, os, re, sys
out, last_n, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def groups(line):
    return {k: float(v) for k, v in re.findall(r'(\S[^=]*?)=(\d+\.\d+)', line.split('s ', 1)[1])}
for path in sorted(glob.glob(os.path.join(out, '*-r*.txt'))):
    lines = [l for l in open(path) if l.startswith('t=')]
    if path.endswith('-idle.txt'):
        use = lines
    else:
        use = lines[-last_n:]
    total = collections.Counter()
    for l in use:
        total.update(groups(l))
    n = max(1, len(use))
    per = {k: v / n for k, v in total.items()}
    where = 'idle' if path.endswith('-idle.txt') else f'last {n} x 20 s of {load}'
    cells = ', '.join(f'{k} {v:.2f} s' for k, v in sorted(per.items(), key=lambda kv: -kv[1]))
    print(f'{os.path.basename(path)} ({where}, mean per 20 s): {cells}')
EOF

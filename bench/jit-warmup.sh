#!/usr/bin/env bash
# The first minutes of a fresh tokengap JVM under request churn: CPU per thread group every 20 s
# (bench/thread_cpu.py: the event loops, the JIT's compiler threads, GC) from the moment
# /actuator/health answers, with no warm-up, and what the churn client saw over the whole run.
#
#   bench/jit-warmup.sh OUT_DIR [SECONDS]              # fixed:100 for 180 s
#   TG_FLAGS="-XX:CompileThresholdScaling=0.1" TOKENS=1000 bench/jit-warmup.sh target/jit-18 120
#
# The packaged jar on JDK 17 (JAVA17) with -Xmx256m and TG_FLAGS, in front of bench/churn/backend.mjs,
# loaded by bench/churn/client.mjs (200 streams of TOKENS tokens, an event every 20 ms). Writes
# OUT_DIR/threads.txt, OUT_DIR/churn.jsonl and OUT_DIR/tokengap.log. Ports 27600, 27680, 27681.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1")
seconds=${2:-180}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
TOKENS=${TOKENS:-100}
mkdir -p "$out"
for port in 27600 27680 27681; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "jit-warmup: port $port is already taken (another run on this machine?)" >&2
    exit 1
  fi
done
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
"$NODE" bench/churn/backend.mjs --port 27600 --interval-ms 20 >"$out/backend.log" 2>&1 &
backend=$!
pids+=($backend)
# shellcheck disable=SC2086 # the flags are words
"$JAVA17" -Xmx256m ${TG_FLAGS:-} -jar "$JAR" --server.port=27680 --management.server.port=27681 \
  --tokengap.upstream.url=http://127.0.0.1:27600 >"$out/tokengap.log" 2>&1 &
proxy=$!
pids+=($proxy)
until curl -sf http://127.0.0.1:27681/actuator/health >/dev/null; do
  kill -0 $proxy 2>/dev/null || { echo "jit-warmup: tokengap exited, see $out/tokengap.log" >&2; exit 1; }
  sleep 0.2
done
python3 bench/thread_cpu.py $proxy 20 $((seconds / 20)) | tee "$out/threads.txt" &
sampler=$!
pids+=($sampler)
rm -f "$out/churn.jsonl"
"$NODE" bench/churn/client.mjs --url http://127.0.0.1:27680 --target tokengap --mode fixed --concurrency 200 \
  --tokens "$TOKENS" --interval-ms 20 --seed 13 --round 1 --session jit-warmup --pids $proxy --backend-pids $backend \
  --warmup-s 0 --measure-s "$((seconds + 5))" --out "$out/churn.jsonl"
wait $sampler

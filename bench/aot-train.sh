#!/usr/bin/env bash
# Trains a JDK 25 AOT cache on the host the way docker/Dockerfile's training run does (the simulator
# on 18000, tokengap on 8080/8081, three rounds of a few requests of each API, health and metrics),
# optionally followed by a streamed load through the proxy (LOAD=1: N streamed chat requests,
# default 12,000, 256 at a time, 8 tokens in and 4 out, by the jar's own bench), with extra flags
# for the training JVM (TFLAGS, e.g. -XX:CompileThresholdScaling=0.2 so that C2 compiles the
# per-request code within the load). Two such caches, compared under churn:
#
#   OUT=/tmp/base.aot bench/aot-train.sh
#   OUT=/tmp/load.aot LOAD=1 TFLAGS="-XX:CompileThresholdScaling=0.2" bench/aot-train.sh
#   JAVA17=$JAVA25 LOADS="" CHURN="fixed:100 mix:64-512" \
#     TG_FLAGS="--enable-native-access=ALL-UNNAMED -XX:AOTMode=on -XX:AOTCache=/tmp/base.aot" \
#     TUNED_FLAGS="--enable-native-access=ALL-UNNAMED -XX:AOTMode=on -XX:AOTCache=/tmp/load.aot" bench/overhead.sh
#
# A cache matches its exact jar path and JDK: use it with the same target/tokengap-*.jar.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
JAVA25=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
JAR=$(realpath "$(ls target/tokengap-*.jar | head -n 1)")
OUT=$(realpath -m "${OUT:?OUT names the cache to write}")
for port in 8080 8081 18000; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "aot-train: port $port is taken" >&2; exit 1; fi
done
work=$(mktemp -d)
rm -f "$OUT"
"$JAVA25" -jar "$JAR" --tokengap.mode=simulator --tokengap.sim.port=18000 --server.port=18080 \
  --management.server.port=18081 >"$work/sim.log" 2>&1 & sim=$!
# shellcheck disable=SC2086
"$JAVA25" --enable-native-access=ALL-UNNAMED -XX:MaxRAM=512m -Xlog:aot=error -XX:AOTCacheOutput="$OUT" ${TFLAGS:-} \
  -jar "$JAR" --tokengap.upstream.url=http://127.0.0.1:18000 >"$work/train.log" 2>&1 & app=$!
trap 'kill $app $sim 2>/dev/null || true' EXIT
for i in $(seq 600); do
  curl -sf -o /dev/null http://127.0.0.1:8081/actuator/health/readiness && curl -sf -o /dev/null http://127.0.0.1:18000/health && break
  sleep 0.2
done
post() { curl -sf -o /dev/null -H 'Content-Type: application/json' --data "$2" "http://127.0.0.1:8080$1"; }
m='"model":"sim-llama-3-8b","stream":true'
for round in 1 2 3; do
  streams=
  for n in 1 2 3 4; do
    post /v1/chat/completions "{$m,\"max_tokens\":24,\"messages\":[{\"role\":\"user\",\"content\":\"Hi $n\"}]}" &
    streams="$streams $!"
  done
  post /v1/completions "{$m,\"max_tokens\":16,\"prompt\":\"Hello\"}"
  post /v1/responses "{$m,\"max_output_tokens\":16,\"input\":\"Hello\"}"
  post /v1/messages "{$m,\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}"
  curl -sf -o /dev/null http://127.0.0.1:8080/v1/models
  for stream in $streams; do wait "$stream"; done
  for path in health health/liveness health/readiness prometheus; do curl -sf -o /dev/null "http://127.0.0.1:8081/actuator/$path"; done
done
if [ "${LOAD:-0}" = 1 ]; then
  "$JAVA25" -jar "$JAR" bench --base-url http://127.0.0.1:8080 --num-prompts "${N:-12000}" --max-concurrency 256 \
    --input-len 8:8 --output-len 4:4 --no-progress | grep -E "Successful requests|duration|throughput \(req"
fi
kill -TERM $app; wait $app || true
kill $sim; wait $sim 2>/dev/null || true
trap - EXIT
grep -h 'AOTCache creation is complete' "$work/train.log"

#!/usr/bin/env bash
# Profiles the packaged jar with async-profiler under one churn scenario of bench/overhead.sh
# (the Node client and backend of bench/churn/), then prints where the event loops' time goes.
#
#   bench/profile-churn.sh OUT.collapsed --mode rate --rate 2000
#   bench/profile-churn.sh OUT.collapsed --mode fixed --concurrency 200 --tokens 100
#
# The profiler comes from Maven Central (tools.profiler:async-profiler 4.2, linux-x64) unless
# ASYNC_PROFILER names a libasyncProfiler.so. A 15 s unrecorded warm-up (WARMUP_S) runs first; the
# profiler is attached after it (jcmd JVMTI.agent_load, its options quoted or jcmd splits them at
# '='), so start-up and the first, interpreted requests are not in the profile (ATTACH=start
# profiles from the JVM's start instead). The profile covers all threads;
# bench/profile_summary.py keeps the loops. AP_EXTRA adds async-profiler options, ending in a comma:
# AP_EXTRA=ann, marks each Java frame's kind (C2, C1, interpreted, inlined) for bench/profile_tiers.py.
# FLOOR=http profiles the Netty floor proxy (bench/bare/NettyFloorProxy.java, as bench/overhead.sh
# runs it) instead of the jar, under the same load, so that the two compare frame by frame;
# FLOOR=http+tuned runs it with tokengap's Netty settings, as bench/overhead.sh does; FLOOR=reactor
# profiles the Reactor Netty relay (bench/bare/ReactorNettyRelay.java), the floor of tokengap's stack.
# HEAP [-Xms256m -Xmx256m] is the JVM's heap, as bench/overhead.sh gives every JVM target; unlike
# there, the JVM runs as the caller without the image's priority flags (the attach needs its user).
# INTERVAL_MS [20] is the backend's gap between tokens: 1,000 streams of 200 tokens at 200 ms are
#   INTERVAL_MS=200 bench/profile-churn.sh OUT.collapsed --mode fixed --concurrency 1000 --tokens 200
set -Eeuo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); shift
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
ASYNC_PROFILER=${ASYNC_PROFILER:-target/async-profiler/linux-x64/libasyncProfiler.so}
if [ ! -f "$ASYNC_PROFILER" ]; then
  mkdir -p target/async-profiler
  curl -sSfL -o target/async-profiler/ap.jar \
    https://repo.maven.apache.org/maven2/tools/profiler/async-profiler/4.2/async-profiler-4.2-linux-x64.jar
  (cd target/async-profiler && unzip -q -o ap.jar)
fi
ls target/tokengap-*.jar >/dev/null 2>&1 || ./mvnw -q -B package -DskipTests
JAR=$(ls target/tokengap-*.jar | head -n 1)
work=$(mktemp -d)
lib=$(realpath "$ASYNC_PROFILER")
opts="event=cpu,interval=500us,threads,${AP_EXTRA:-}collapsed,file=$out"
jcmd=${JCMD:-${JAVA17%/java}/jcmd}
HEAP=${HEAP:-"-Xms256m -Xmx256m"}
agent=
[ "${ATTACH:-warm}" = start ] && agent="-agentpath:$lib=start,$opts"
rm -f "$out"
"$NODE" bench/churn/backend.mjs --port 27600 --interval-ms "${INTERVAL_MS:-20}" >"$work/backend.log" 2>&1 &
backend=$!
if [ -n "${FLOOR:-}" ]; then
  [ -s target/bare-classpath.txt ] || ./mvnw -q -B dependency:build-classpath -Dmdep.outputFile=target/bare-classpath.txt
  program=NettyFloorProxy
  [ "$FLOOR" = reactor ] && program=ReactorNettyRelay
  "$JAVA17" $HEAP ${agent:+"$agent"} -cp "$(cat target/bare-classpath.txt)" "bench/bare/$program.java" \
    "$FLOOR" 27680 27600 >"$work/tokengap.log" 2>&1 &
  proxy=$!
  trap 'kill $proxy $backend 2>/dev/null || true' EXIT
  until grep -qs "$program" "$work/tokengap.log"; do sleep 0.5; done
else
  "$JAVA17" $HEAP \
    ${agent:+"$agent"} \
    -jar "$JAR" --server.port=27680 --management.server.port=27681 \
    --tokengap.upstream.url=http://127.0.0.1:27600 >"$work/tokengap.log" 2>&1 &
  proxy=$!
  trap 'kill $proxy $backend 2>/dev/null || true' EXIT
  until curl -sf http://127.0.0.1:27681/actuator/health >/dev/null; do sleep 0.5; done
fi
for phase in warmup:${WARMUP_S:-15} profile:20; do
  if [ "${phase%%:*}" = profile ] && [ -z "$agent" ]; then
    "$jcmd" $proxy JVMTI.agent_load "$lib" "\"start,$opts\"" >/dev/null
  fi
  "$NODE" bench/churn/client.mjs --url http://127.0.0.1:27680 --target "${phase%%:*}" "$@" \
    --interval-ms "${INTERVAL_MS:-20}" --seed 13 --round 1 --session profile --pids $proxy --backend-pids $backend \
    --warmup-s 3 --measure-s "${phase#*:}" --out "$work/churn.jsonl" >/dev/null
done
[ -z "$agent" ] && "$jcmd" $proxy JVMTI.agent_load "$lib" "\"stop,$opts\"" >/dev/null
kill $proxy; wait $proxy 2>/dev/null || true
kill $backend 2>/dev/null || true
trap - EXIT
python3 bench/profile_summary.py "$out"

#!/usr/bin/env bash
# What Reactor Netty's HTTP server costs per request on its own: the two
# servers of bench/bare/BareServers.java (the same trivial handler on Reactor Netty's HttpServer
# and on Netty's codec alone, 2 epoll event loops each, JDK 17, -Xmx256m) under the churn
# client's non-streaming rate mode, alternated round by round; CPU per request from each
# server's utime+stime over the window.
#
#   bench/bare-servers.sh [rounds]      # default 3 rounds of 30 s each, ~4 min; raw lines in
#                                       # $OUT/bare.jsonl (default target/bare-servers)
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
OUT=${OUT:-target/bare-servers}
RATE=${RATE:-2000}
JAVA17=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
NODE=${NODE:-node}
mkdir -p "$OUT"
[ -s target/bare-classpath.txt ] || ./mvnw -q -B dependency:build-classpath -Dmdep.outputFile=target/bare-classpath.txt
CP=$(cat target/bare-classpath.txt)
"$JAVA17" -Xmx256m -cp "$CP" bench/bare/BareServers.java reactor 28001 >"$OUT/reactor.log" 2>&1 &
reactor=$!
"$JAVA17" -Xmx256m -cp "$CP" bench/bare/BareServers.java netty 28002 >"$OUT/netty.log" 2>&1 &
netty=$!
trap 'kill $reactor $netty 2>/dev/null || true' EXIT
until grep -q 'server on port' "$OUT/reactor.log" 2>/dev/null && grep -q 'server on port' "$OUT/netty.log" 2>/dev/null; do
  sleep 0.5
done
run() { # run TARGET PORT PID ROUND MEASURE_S
  "$NODE" bench/churn/client.mjs --url "http://127.0.0.1:$2" --target "$1" --mode rate --rate "$RATE" \
    --warmup-s 3 --measure-s "$5" --pids "$3" --round "$4" --session bare --out "$OUT/bare.jsonl"
}
# warm-up (JIT), not recorded
for t in "reactor 28001 $reactor" "netty 28002 $netty"; do
  set -- $t; "$NODE" bench/churn/client.mjs --url "http://127.0.0.1:$2" --mode rate --rate "$RATE" \
    --warmup-s 3 --measure-s 20 >/dev/null 2>&1
done
for round in $(seq 1 "$ROUNDS"); do
  run reactor 28001 "$reactor" "$round" 30
  run netty 28002 "$netty" "$round" 30
done
python3 - "$OUT/bare.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for target in ('reactor', 'netty'):
    per = [r['proxy_cpu_s_per_1k_requests'] * 1000 for r in rows if r['target'] == target]
    print(f"{target:8s} CPU per request, µs: " + ", ".join(f"{p:.1f}" for p in per)
          + f"  (mean {sum(per) / len(per):.1f})")
PY

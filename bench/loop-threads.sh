#!/usr/bin/env bash
# Per-thread CPU (user, system), sleeps, preemptions and run-queue waits of tokengap's and nginx's
# threads over whole churn client runs: /proc/<pid>/task/*/{stat,status,
# schedstat} before and after each run, summed per thread name. Direct runs show the backend's.
#
#   bench/loop-threads.sh            # ~7 minutes; SCEN (client mode words), ROUNDS ["1 2"], WARM [15],
#                                    # MEAS [20], SPREAD [0], TGFLAGS, JAR; output under OUT [target/loop-threads]
set -u
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${OUT:-target/loop-threads}"); mkdir -p "$OUT"
SCEN=${SCEN:-"--mode fixed --concurrency 200 --tokens 1000"}
JAR=${JAR:-$(ls target/tokengap-*.jar | head -n 1)}
for port in 27600 27680 27681 27700; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "loop-threads: port $port is taken" >&2; exit 1; fi
done
node bench/churn/backend.mjs --port 27600 --interval-ms 20 --spread-ms ${SPREAD:-0} >$OUT/backend.log 2>&1 & BPID=$!
mkdir -p $OUT/ng
# shellcheck source=bench/nginx-conf.sh
. bench/nginx-conf.sh
nginx_conf "$OUT/ng" 27700 27600 >"$OUT/ng/nginx.conf"
nginx -c $OUT/ng/nginx.conf & NM=$!
java -Xmx256m ${TGFLAGS:-} -jar $JAR --server.port=27680 --management.server.port=27681 --tokengap.upstream.url=http://127.0.0.1:27600 >$OUT/tg.log 2>&1 & TPID=$!
trap 'kill $TPID $BPID 2>/dev/null; kill -QUIT $NM 2>/dev/null; wait 2>/dev/null' EXIT
for i in $(seq 120); do curl -sf -o /dev/null http://127.0.0.1:27681/actuator/health && break; sleep 0.5; done
sleep 1
NW=$(pgrep -P $NM | paste -sd, -)
snap() { # pids...
  for p in "$@"; do for t in /proc/$p/task/*; do
    printf '%s %s %s %s %s %s\n' "$p" "$(cat $t/comm | tr ' ' _)" "$(grep -m1 '^voluntary' $t/status | awk '{print $2}')" "$(grep -m1 nonvoluntary $t/status | awk '{print $2}')" "$(awk '{print $14":"$15}' $t/stat)" "$(awk '{print $2}' $t/schedstat)"
  done; done
}
run() { # name url pids...
  local name=$1 url=$2; shift 2
  snap "$@" > $OUT/$name.before
  node bench/churn/client.mjs --url $url --target $name $SCEN --interval-ms 20 --warmup-s 3 --measure-s ${MEAS:-20} --out $OUT/churn.jsonl 2>&1 | tail -1
  snap "$@" > $OUT/$name.after
  python3 - $OUT/$name.before $OUT/$name.after <<'PY'
import sys,collections
def rd(f):
  # thread name -> [voluntary, nonvoluntary, user ticks, system ticks, run-queue wait ns]
  d=collections.defaultdict(lambda: [0, 0, 0, 0, 0])
  for l in open(f):
    _, name, vol, nonvol, cpu, wait = l.split()
    user, system = cpu.split(':')
    for i, v in enumerate((vol, nonvol, user, system, wait)): d[name][i] += int(v)
  return d
a=rd(sys.argv[1]); b=rd(sys.argv[2])
for c in sorted(b):
  dv, dn, du, ds, dw = (x - y for x, y in zip(b[c], a[c]))
  if dv+dn>50 or du+ds>5: print(f"  {c:28s} voluntary {dv:8d} nonvoluntary {dn:8d} user {du/100:.2f} s sys {ds/100:.2f} s runq-wait {dw/1e9:.3f} s")
PY
}
# warm-up
for u in http://127.0.0.1:27680 http://127.0.0.1:27700; do node bench/churn/client.mjs --url $u --target w --mode fixed --concurrency 200 --tokens 100 --interval-ms 20 --warmup-s 0 --measure-s ${WARM:-15} --out /dev/null 2>&1 | tail -1; done
for r in ${ROUNDS:-1 2}; do
run direct http://127.0.0.1:27600 $BPID
run tokengap http://127.0.0.1:27680 $TPID
run nginx http://127.0.0.1:27700 $NM ${NW//,/ }
done

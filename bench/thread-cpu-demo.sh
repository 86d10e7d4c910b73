#!/usr/bin/env bash
# CPU per second of each thread group of one or more tokengap jars in demo mode (the built-in
# simulator, its demo load and the engine scrape every 250 ms), nothing else running: what the
# scraper's thread and the event loops cost at rest.
#
#   bench/thread-cpu-demo.sh OUT_DIR JAR...      # name the jars apart: before.jar after.jar
#
# The jars run in turn, alternated A B A B (ROUNDS times): each is started, left WARMUP_S, then
# sampled by bench/thread_cpu.py over one MEASURE_S window (user + system time from /proc, per
# thread group). The load average is printed beside each window: the machine may be shared.
# Raw samples in OUT_DIR/<jar name>-r<round>.txt; a table of µs of CPU per second at the end.
#
# Environment [defaults]: MEASURE_S [60]  WARMUP_S [20]  ROUNDS [2]  JAVA [java]
#   PORT [27690]  the proxy port; the management port is PORT+1
set -Eeuo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); shift
mkdir -p "$out"
JAVA=${JAVA:-java}
MEASURE_S=${MEASURE_S:-60}
WARMUP_S=${WARMUP_S:-20}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-27690}
for port in "$PORT" $((PORT + 1)); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "thread-cpu-demo: port $port is already taken" >&2
    exit 1
  fi
done
proxy=
trap 'if [ -n "$proxy" ]; then kill $proxy 2>/dev/null || true; fi' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for jar in "$@"; do
    name=$(basename "$jar" .jar)
    "$JAVA" -Xmx256m -jar "$jar" --tokengap.mode=demo --server.port="$PORT" \
      --management.server.port=$((PORT + 1)) >"$out/$name-r$round.log" 2>&1 &
    proxy=$!
    until curl -sf "http://127.0.0.1:$((PORT + 1))/actuator/health" >/dev/null; do sleep 0.5; done
    sleep "$WARMUP_S"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/$name-r$round.txt"
    THREAD_CPU_MIN=0 python3 bench/thread_cpu.py $proxy "$MEASURE_S" 1 >>"$out/$name-r$round.txt"
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/$name-r$round.txt"
    kill $proxy; wait $proxy 2>/dev/null || true
    proxy=
  done
done
trap - EXIT
python3 - "$out" "$MEASURE_S" <<'PY'
import glob, os, re, sys
out, seconds = sys.argv[1], float(sys.argv[2])
for path in sorted(glob.glob(os.path.join(out, '*-r*.txt'))):
    text = open(path).read()
    line = next(l for l in text.splitlines() if l.startswith('t='))
    groups = {k: float(v) for k, v in re.findall(r'(\S[^=]*?)=(\d+\.\d+)', line.split('s ', 1)[1])}
    loads = re.findall(r'load average \w+: (\S+)', text)
    cells = '  '.join(f'{k} {v / seconds * 1e6:,.0f}' for k, v in sorted(groups.items(), key=lambda kv: -kv[1]))
    print(f'{os.path.basename(path)[:-4]:<24} µs CPU/s: {cells}  (load average {" -> ".join(loads)})')
PY

#!/usr/bin/env python3
"""CPU time of a JVM's threads by group, per interval, read from /proc (user + system).

    python3 bench/thread_cpu.py PID [INTERVAL_S [COUNT]]

Threads are grouped by name with digits dropped ("tokengap-epoll-1" and "-2" are one group; so
are "C1 CompilerThre" and "C2 CompilerThre", which /proc names alike). Each line is one interval:
the groups that used more than 0.05 s in it (THREAD_CPU_MIN), largest first. A thread that ends within an interval
loses its share of that interval. Shows, for example, how much CPU the JIT takes in the
first minutes of a churn load and how the event loops' own CPU falls as it finishes.
"""
import collections
import os
import sys
import time


def snapshot(pid):
    """CPU seconds per thread group, now."""
    ticks = os.sysconf("SC_CLK_TCK")
    groups = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended while we looked
        group = "".join(c for c in name if not c.isdigit()).strip("-# ") or name
        groups[group] += (int(fields[11]) + int(fields[12])) / ticks
    return groups


def main():
    pid = sys.argv[1]
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    floor = float(os.environ.get("THREAD_CPU_MIN", "0.05"))
    before = snapshot(pid)
    start = time.monotonic()
    for _ in range(count):
        time.sleep(interval)
        try:
            now = snapshot(pid)
        except FileNotFoundError:
            return  # the JVM has gone
        used = {g: now[g] - before[g] for g in now if now[g] - before[g] > floor}
        line = " ".join(f"{g}={s:.2f}" for g, s in sorted(used.items(), key=lambda kv: -kv[1]))
        print(f"t={time.monotonic() - start:6.0f}s {line}", flush=True)
        before = now


if __name__ == "__main__":
    main()

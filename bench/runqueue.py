#!/usr/bin/env python3
"""How long a process's threads wait for a CPU, window by window.

    python3 bench/runqueue.py PID SECONDS [--threads PREFIX[,PREFIX...]] [--interval-ms 10]

Reads /proc/PID/task/*/schedstat (time on a CPU, time runnable but waiting for one) every
interval, for the threads whose name starts with one of the prefixes (default: every thread; the
kernel keeps a thread's first 15 characters, so Netty's multiThreadIoEventLoopGroup-2-1 is
multiThreadIoEv),
and prints per thread: CPU time, run-queue wait, and how many windows of the interval had the
thread waiting for a CPU longer than 1, 2, 5 and 10 ms, with the longest wait in one window.

A stall that an event loop's own queue causes shows as CPU time on that loop; a stall the
machine's scheduler causes (more runnable threads than cores) shows as run-queue wait. The
longest single delay a client sees can then be set beside these windows.
"""
import argparse
import os
import sys
import time

EDGES_MS = (1, 2, 5, 10)


def threads(pid, prefixes):
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if not prefixes or name.startswith(prefixes):
            found[tid] = name
    return found


def sample(pid, tids):
    out = {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                cpu, wait, _ = f.read().split()
            out[tid] = (int(cpu), int(wait))
        except OSError:
            pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pid", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--threads", default="")
    parser.add_argument("--interval-ms", type=float, default=10.0)
    args = parser.parse_args()
    prefixes = tuple(p for p in args.threads.split(",") if p)
    names = threads(args.pid, prefixes)
    if not names:
        sys.exit(f"runqueue: no thread of {args.pid} matches {prefixes}")
    interval = args.interval_ms / 1000
    first = last = sample(args.pid, names)
    windows = {tid: [0] * len(EDGES_MS) for tid in names}
    longest = {tid: 0 for tid in names}
    busiest = {tid: 0 for tid in names}
    end = time.monotonic() + args.seconds
    next_at = time.monotonic() + interval
    count = 0
    while time.monotonic() < end:
        time.sleep(max(0.0, next_at - time.monotonic()))
        next_at += interval
        now = sample(args.pid, names)
        count += 1
        for tid, (cpu, wait) in now.items():
            if tid not in last:
                continue
            waited = (wait - last[tid][1]) / 1e6
            ran = (cpu - last[tid][0]) / 1e6
            longest[tid] = max(longest[tid], waited)
            busiest[tid] = max(busiest[tid], ran)
            for i, edge in enumerate(EDGES_MS):
                if waited > edge:
                    windows[tid][i] += 1
        last = now
    print(f"runqueue: pid {args.pid}, {count} windows of {args.interval_ms:g} ms")
    header = "thread                         cpu ms  wait ms  " + "  ".join(f">{e}ms" for e in EDGES_MS) \
        + "  longest wait  most cpu in a window"
    print(header)
    for tid, name in sorted(names.items(), key=lambda kv: kv[1]):
        if tid not in last or tid not in first:
            continue
        cpu = (last[tid][0] - first[tid][0]) / 1e6
        wait = (last[tid][1] - first[tid][1]) / 1e6
        counts = "  ".join(f"{n:5d}" for n in windows[tid])
        print(f"{name[:28]:28s} {cpu:8.0f} {wait:8.0f}  {counts}  {longest[tid]:9.1f} ms  {busiest[tid]:9.1f} ms")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Two async-profiler collapsed profiles of the proxy port's event loops, side by side.

    python3 bench/profile_compare.py BEFORE.collapsed AFTER.collapsed [FRAME-SUBSTRING...]

Counts the busy samples (those not waiting in epoll) of the proxy's loop threads: tokengap-epoll-*,
or multiThreadIoEventLoopGroup-* for the floor proxy (FLOOR=http bench/profile-churn.sh). Each counts
for its owner: the deepest frame of the stack that is tokengap's, Reactor Netty's, Reactor's or Netty's
(what that frame calls, the JDK and the kernel included, counts for it), split into user and kernel
by the stack's leaf. Each FRAME-SUBSTRING adds the samples whose stack contains it anywhere
(inclusive). Both profiles must cover the same load for the same time (bench/profile-churn.sh
with the same arguments), so that sample counts compare as work per request.
"""
import collections
import sys

OWNERS = (("dev/tokengap", "tokengap"), ("reactor/netty", "reactor-netty"), ("reactor/core", "reactor-core"),
          ("io/netty", "netty"))


def load(path, frames):
    counts = collections.Counter()
    busy = 0
    with open(path) as f:
        for line in f:
            stack, n = line.rstrip().rsplit(" ", 1)
            n = int(n)
            parts = stack.split(";")
            if not parts[0].startswith(("[tokengap-epoll", "[relay-epoll", "[multiThreadIoEventLoopGroup")):
                continue
            if any("epollWait" in p or "epoll_pwait" in p for p in parts):
                continue
            busy += n
            owner = "other"
            for p in reversed(parts):
                hit = next((name for prefix, name in OWNERS if p.startswith(prefix)), None)
                if hit:
                    owner = hit
                    break
            counts[owner + (" (kernel)" if parts[-1].endswith("_[k]") else "")] += n
            for frame in frames:
                if frame in stack:
                    counts["incl. " + frame] += n
    return counts, busy


def main(before, after, frames):
    a, busy_a = load(before, frames)
    b, busy_b = load(after, frames)
    print(f"{'busy loop samples':44s} {busy_a:8d} {busy_b:8d} {busy_b - busy_a:+8d}")
    for key in sorted(set(a) | set(b), key=lambda k: (k.startswith("incl. "), k)):
        print(f"{key:44s} {a[key]:8d} {b[key]:8d} {b[key] - a[key]:+8d}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

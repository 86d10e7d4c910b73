#!/usr/bin/env python3
"""Syscalls per relayed event from bench/profile.sh's strace logs, by call and by kind of fd.

usage: strace_tally.py OUT_DIR EVENTS_IN_WINDOW NAME...
Each NAME has OUT_DIR/NAME.strace (strace -f -o) and OUT_DIR/NAME-fd-*.txt (ls -l /proc/PID/fd).
"""
import glob
import re
import sys
from collections import Counter

CALL = re.compile(r"^\d+\s+(?:<\.\.\. )?(\w+)(?:\(| resumed>)(\d+)?")


def fd_kinds(out, name):
    kinds = {}
    for path in glob.glob(f"{out}/{name}-fd-*.txt"):
        for line in open(path):
            m = re.search(r" (\d+) -> (.*)$", line.strip())
            if m:
                target = m.group(2)
                kind = "eventfd" if "eventfd" in target else "epoll" if "eventpoll" in target else \
                    "socket" if target.startswith("socket:") else "pipe" if "pipe" in target else "other"
                kinds[int(m.group(1))] = kind
    return kinds


def tally(out, name):
    kinds = fd_kinds(out, name)
    calls = Counter()
    for line in open(f"{out}/{name}.strace"):
        if "resumed>" in line:
            continue
        m = CALL.match(line)
        if not m:
            continue
        call, fd = m.group(1), m.group(2)
        if call in ("read", "write", "readv", "writev", "recvfrom", "sendto", "sendmsg", "recvmsg") and fd:
            call = f"{call}({kinds.get(int(fd), 'fd?')})"
        calls[call] += 1
    return calls


def main():
    out, events, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    tallies = {n: tally(out, n) for n in names}
    keys = sorted(set().union(*tallies.values()), key=lambda k: -sum(t[k] for t in tallies.values()))
    print(f"Syscalls per relayed event ({events} events offered in the 5 s window, 50 x 20 ms):\n")
    print("| syscall | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for k in keys:
        if sum(t[k] for t in tallies.values()) < events * 0.02:
            continue
        print(f"| {k} | " + " | ".join(f"{t[k] / events:.2f}" for t in tallies.values()) + " |")
    print("| **total** | " + " | ".join(f"**{sum(t.values()) / events:.2f}**" for t in tallies.values()) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How much of the event loops' time runs in code the JIT has not compiled with C2 yet.

    AP_EXTRA=ann, bench/profile-churn.sh OUT.collapsed ...    # frames annotated by kind
    python3 bench/profile_tiers.py OUT.collapsed [TOP]

async-profiler's `ann` option suffixes each Java frame with its kind: _[j] compiled by C2 (or
the JIT's top tier), _[1] compiled by C1, _[0] interpreted, _[i] inlined into the frame above it.
A sample counts for the code unit it was running in: from the leaf up, the first Java frame that is
not inlined (native and kernel frames below it are that unit's calls). Prints the loops' samples
by kind (all of them, and those that served a stream's own work by bench/profile_summary.py's
rules), the packages and the methods of the samples in C1 or interpreted code.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_summary import STREAM_OWN, served  # noqa: E402 (the sibling script)

LOOPS = ("[tokengap-epoll", "[reactor-http-epoll")
KINDS = {"_[j]": "C2", "_[1]": "C1", "_[0]": "interpreted"}


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    total = 0
    kinds = collections.Counter()
    stream_kinds = collections.Counter()
    packages = collections.Counter()
    methods = collections.Counter()
    annotated = False
    with open(path) as f:
        for line in f:
            stack, n = line.rsplit(" ", 1)
            frames = stack.split(";")
            if not frames[0].startswith(LOOPS):
                continue
            n = int(n)
            total += n
            kind, method = "no Java frame", None
            for frame in reversed(frames):
                suffix = frame[-4:]
                if suffix == "_[i]":
                    annotated = True
                    continue
                if suffix in KINDS:
                    annotated = True
                    kind, method = KINDS[suffix], frame[:-4]
                    break
            kinds[kind] += n
            if served(frames[1:]) in STREAM_OWN:
                stream_kinds[kind] += n
            if kind in ("C1", "interpreted"):
                packages[(kind, "/".join(method.split("/")[:3]))] += n
                methods[(kind, method)] += n
    if not total:
        sys.exit(f"{path}: no event-loop samples")
    if not annotated:
        sys.exit(f"{path}: frames carry no kind (profile with AP_EXTRA=ann,)")
    print(f"event-loop samples: {total}")
    for kind, n in kinds.most_common():
        print(f"  {n / total:7.2%}  {kind}")
    own = sum(stream_kinds.values())
    print(f"a stream's own work (bench/profile_summary.py's rules): {own} samples")
    for kind, n in stream_kinds.most_common():
        print(f"  {n / own:7.2%}  {kind}")
    print("below C2, by package:")
    for (kind, package), n in packages.most_common(12):
        print(f"  {n / total:7.2%}  {kind:11}  {package}")
    print("below C2, by method:")
    for (kind, method), n in methods.most_common(top):
        print(f"  {n / total:7.2%}  {kind:11}  {method}")


if __name__ == "__main__":
    main()

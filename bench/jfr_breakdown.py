#!/usr/bin/env python3
"""Where tokengap's CPU goes, from `jfr print --events jdk.ExecutionSample --stack-depth 96` on stdin.

Self time: each sample's top frame, grouped by what it belongs to. Inclusive time: samples whose
stack passes through one of tokengap's per-event steps.
"""
import re
import sys
from collections import Counter

SELF = [
    ("tokengap: SSE scanner", r"^dev\.tokengap\.sse\."),
    ("tokengap: timing, metrics, attribution", r"^dev\.tokengap\.(timing|metrics|attribution)\."),
    ("tokengap: proxy", r"^dev\.tokengap\.proxy\."),
    ("Prometheus client", r"^io\.prometheus\."),
    ("Netty HTTP codec", r"^io\.netty\.handler\.codec\."),
    ("Netty buffers, refcounts", r"^io\.netty\.(buffer|util\.Recycler|util\.ReferenceCountUtil|util\.internal\.RefCnt|util\.AbstractReferenceCounted)"),
    ("Netty channel pipeline, epoll transport", r"^io\.netty\.channel\."),
    ("Netty event loop, task queues", r"^io\.netty\.(util\.concurrent|util\.internal)"),
    ("Netty other", r"^io\.netty\."),
    ("Reactor Netty", r"^reactor\.netty\."),
    ("Reactor Core", r"^reactor\.core\."),
    ("Spring", r"^org\.springframework\."),
    ("logging (Logback, Micrometer turbo filter)", r"^(ch\.qos\.logback|io\.micrometer\.core\.instrument\.binder\.logging|org\.slf4j|org\.apache\.commons\.logging)"),
    ("JDK", r"^(java|jdk|sun)\."),
]
INCLUSIVE = [
    ("ResponseRelay.process (scan each byte)", "dev.tokengap.proxy.ResponseRelay.process("),
    ("ResponseRelay.recordWrite (time + record)", "dev.tokengap.proxy.ResponseRelay.recordWrite("),
    ("ResponseRelay.run (writeAndFlush to client)", "dev.tokengap.proxy.ResponseRelay.run("),
    ("ResponseRelay.onNext (whole upstream buffer)", "dev.tokengap.proxy.ResponseRelay.onNext("),
    ("HttpObjectDecoder (upstream response parse)", "io.netty.handler.codec.http.HttpObjectDecoder.decode("),
    ("HttpObjectEncoder (client response chunks)", "io.netty.handler.codec.http.HttpObjectEncoder.write("),
    ("Epoll read (upstream or client socket)", "AbstractEpollStreamChannel$EpollStreamUnsafe.epollInReady("),
    ("MetricsScraper (engine /metrics)", "dev.tokengap.backend."),
    ("GC-free JDK + JIT threads excluded", "@@never@@"),
]


def main():
    samples = []
    stack = None
    for line in sys.stdin:
        if line.startswith("jdk.ExecutionSample"):
            stack = []
            samples.append(stack)
        elif stack is not None:
            m = re.match(r"^\s+([\w.$<>]+\.[\w$<>]+\(.*?\))\s+line:", line)
            if m:
                stack.append(m.group(1))
    n = len(samples)
    if n == 0:
        print("no samples")
        return
    own = Counter()
    for s in samples:
        top = s[0] if s else ""
        own[next((name for name, rx in SELF if re.match(rx, top)), "other")] += 1
    print(f"CPU samples: {n} (jdk.ExecutionSample every 1 ms per running Java thread)\n")
    print("| self time in | share |\n|---|---|")
    for name, c in own.most_common():
        print(f"| {name} | {100 * c / n:.1f} % |")
    print("\n| inclusive time under | share |\n|---|---|")
    for name, needle in INCLUSIVE:
        c = sum(1 for s in samples if any(needle in f for f in s))
        if c:
            print(f"| {name} | {100 * c / n:.1f} % |")


if __name__ == "__main__":
    main()

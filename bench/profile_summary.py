#!/usr/bin/env python3
"""Where tokengap's event loops spend their time, from an async-profiler collapsed profile.

    python3 bench/profile_summary.py OUT.collapsed [FRAME-SUBSTRING...]

Prints the self time of the event-loop threads (tokengap-epoll-*, the proxy port's; reactor-http-epoll-*
with -Dtokengap.netty.deferInterest=false or in builds before it) by package, what the loops' samples
served (a relayed event, a stream's end, its start, the wait), the inclusive share of each given
frame substring (default: the parts of the proxy path), and the hottest frames; and, for the samples
that served a stream's own work (its request, the engine's head, its end), their self time by package.
"""
import collections
import sys

DEFAULT = ["ReactorHttpHandlerAdapter", "ProxyExchange", "EngineCall", "PooledConnectionProvider", "HttpClientCodec",
           "HttpServerCodec", "ResponseRelay", "StreamTap", "ExchangeRecorder", "RequestFacts", "HopByHopHeaders",
           "FluxReceive.", "epoll_ctl", "TokengapMeters", "io/prometheus", "_[k]"]


# What a loop sample served, by the first rule (in this order) one of whose frames is in its stack.
# A read's own recv and buffer allocation come before its pipeline, so they count as "reads,
# before the pipeline" whatever the read then carries.
SERVED = [
    ("waiting (epoll_wait)", ["Native.epollWait", "epoll_pwait"]),
    ("a stream's end", ["ResponseRelay.upstreamTerminated", "ResponseRelay.finish", "EngineCall.abandon"]),
    ("the engine's response head", ["EngineCall.responded", "ProxyExchange.responded"]),
    ("a relayed event (engine read to client write)", ["ResponseRelay.onNext", "ResponseRelay.run",
                                                       "ResponseRelay.operationComplete"]),
    ("a request from the client, to the engine", ["HttpServerOperations", "ProxyHandler", "ProxyExchange",
                                                   "FluxReceive", "HttpServerCodec", "StrictRequestHandler"]),
    ("reads, before the pipeline (recv, buffers)", ["epollInReady"]),
    ("writes the socket had refused", ["epollOutReady"]),
    ("tasks and timers", ["runAllTasks", "SingleThreadEventExecutor.runTask", "AbstractScheduledEventExecutor"]),
]


# The SERVED rules that are a stream's own work rather than its events or the loop's.
STREAM_OWN = ("a stream's end", "the engine's response head", "a request from the client, to the engine")


def package(frame):
    """Where a sample's own frame is: the kernel, native code, or a Java package."""
    if frame.endswith("_[k]"):
        return "kernel"
    if "/" not in frame:
        return "native (libc, JVM stubs)"
    parts = frame.split("/")
    return "/".join(parts[:3] if parts[0] in ("io", "org", "dev") else parts[:2])


def served(frames):
    for name, patterns in SERVED:
        if any(pattern in frame for frame in frames for pattern in patterns):
            return name
    return "other (the loop's own work)"


def main(path, patterns):
    loop = 0
    packages = collections.Counter()
    inclusive = collections.Counter()
    serving = collections.Counter()
    hottest = collections.Counter()
    stream = collections.Counter()
    for line in open(path):
        stack, _, count = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        if not frames[0].startswith(("[tokengap-epoll", "[relay-epoll", "[reactor-http-epoll", "[multiThreadIoEventLoopGroup")):
            continue
        n = int(count)
        loop += n
        top = frames[-1]
        hottest[top] += n
        what = served(frames[1:])
        serving[what] += n
        packages[package(top)] += n
        if what in STREAM_OWN:
            stream[package(top)] += n
        for pattern in patterns:
            if any(pattern in frame for frame in frames[1:]):
                inclusive[pattern] += n
    if loop == 0:
        sys.exit("no event-loop samples in " + path)
    print(f"event-loop samples: {loop}")
    print("\nself time by package")
    for name, n in packages.most_common(15):
        print(f"{100 * n / loop:6.2f} %  {name}")
    print("\nwhat the samples served (first match in this order)")
    for name, _ in SERVED + [("other (the loop's own work)", None)]:
        print(f"{100 * serving[name] / loop:6.2f} %  {name}")
    own = sum(stream.values())
    print(f"\na stream's own work (its request, the engine's head, its end): {own} samples, self time by package")
    for name, n in stream.most_common(15):
        print(f"{100 * n / own:6.2f} %  {name}")
    print("\ninclusive (any frame of the stack matches)")
    for pattern in patterns:
        print(f"{100 * inclusive[pattern] / loop:6.2f} %  {pattern}")
    print("\nhottest frames (self)")
    for frame, n in hottest.most_common(15):
        print(f"{100 * n / loop:6.2f} %  {frame[:140]}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:] or DEFAULT)

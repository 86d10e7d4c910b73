#!/usr/bin/env python3
"""Tables and target verdicts of bench/overhead.sh's churn scenarios, from its churn.jsonl.

    python3 bench/churn_report.py target/overhead/churn.jsonl

One table per scenario (fixed-N, mix-A-B: one-way delay of every SSE event; rate-R: the latency of
non-streaming requests from their intended send). Added = a target's percentile minus the direct
run's same percentile in the same round (percentiles of different populations cannot be
subtracted request by request); the tables give the mean over rounds and, in brackets, the
rounds' range. "x nginx" divides tokengap's added value by nginx's: it is only printed when
nginx's added value is at least MIN_ADDED_US in every round, since dividing by a value within
noise of zero (or negative) means nothing; the absolute values are given instead. The verdicts
hold tokengap to each reference target the run has (nginx; the Reactor Netty relay, netty-reactor,
when FLOOR has "reactor") with that reference's limits (REFERENCES).
"""
import json
import sys
from collections import defaultdict
from statistics import mean

from overhead_report import added, fmt, load, rng  # the long-stream report's helpers

MIN_ADDED_US = 10.0

# The targets, tokengap against a reference target: (its name, limits on the added delay of a
# streamed event, on CPU per event, on the added latency of a non-streaming request, on CPU per
# request). nginx is the reference the first targets were set against; the Reactor Netty relay
# (netty-reactor, FLOOR=reactor) is the floor of tokengap's own stack (docs/performance.md).
REFERENCES = (
    ("nginx", (("added p50", "a50", 1.2), ("added p99", "a99", 1.5)), 1.5,
     (("added latency p50", "a50", 1.5), ("added latency p99", "a99", 1.5)), 1.5),
    ("netty-reactor", (("added p50", "a50", 1.2), ("added p99", "a99", 1.2)), 1.15,
     (("added latency p50", "a50", 1.2), ("added latency p99", "a99", 1.2)), 1.2),
)


def avg(xs):
    xs = [x for x in xs if x is not None]
    return mean(xs) if xs else None


def ratio(tg, ref):
    """tokengap's mean over the reference's, or None when its rounds are too close to zero."""
    if not tg or not ref or min(ref) < MIN_ADDED_US:
        return None
    return mean(tg) / mean(ref)


def ratio_cell(tg, ng):
    r = ratio(tg, ng)
    if r is not None:
        return f"{r:.2f}"
    if not ng:
        return "-"
    return f"n/a (nginx {mean(ng):+.0f})"


class Target:
    """A target's runs in one scenario, with the per-round values the tables and verdicts use."""

    def __init__(self, name, runs, direct, streaming):
        self.name = name
        self.runs = runs
        self.direct = name == "direct"
        self.a50 = added(runs, direct, "p50_us")
        self.a99 = added(runs, direct, "p99_us")
        self.a999 = added(runs, direct, "p999_us")
        self.f50 = added(runs, direct, "first_event_p50_us") if streaming else []
        self.f99 = added(runs, direct, "first_event_p99_us") if streaming else []
        key = "proxy_cpu_s_per_100k_events" if streaming else "proxy_cpu_s_per_1k_requests"
        scale = 1 if streaming else 1000  # rate: ms per 1k requests
        self.cpu = [None if r.get(key) is None else r[key] * scale for r in runs]
        self.rss = [r.get("proxy_peak_rss_mib") for r in runs]
        # The same CPU by thread group, in the same unit (runs from before the client recorded
        # it: none)
        self.groups = {}
        if runs and all(r.get("proxy_cpu_s_by_threads") and r.get("proxy_cpu_s") and r.get(key) for r in runs):
            for g in GROUPS:
                self.groups[g] = [r["proxy_cpu_s_by_threads"].get(g, 0) * r[key] * scale / r["proxy_cpu_s"]
                                  for r in runs]
        self.coalesced = sum(r["coalesced_events"] for r in runs)
        # Coalesced reads that came right after the client's own loop stalled (older runs: none)
        self.client_stalled = (sum(r["client_stalled_coalesced_events"] for r in runs)
                               if all("client_stalled_coalesced_events" in r for r in runs) else "?")
        self.events = sum(r["measured_events"] for r in runs)
        self.failed = sum(r["requests_failed"] for r in runs)
        self.requests = sum(r["requests_measured"] for r in runs)
        self.failures = defaultdict(int)
        for r in runs:
            for k, v in (r.get("failures") or {}).items():
                self.failures[k] += v

    def cpu_mean(self):
        return None if None in self.cpu else avg(self.cpu)

    def failed_cell(self):
        if not self.failed:
            return f"0 / {self.requests}"
        why = ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items()))
        return f"**{self.failed}** / {self.requests} ({why})"


GROUPS = ("loops", "tokengap_other", "jit", "gc_vm", "other")


def thread_table(scenarios):
    """Each proxy's CPU by thread group: its event loops apart from what else its JVM ran."""
    rows = [(sc, streaming, t) for sc, (streaming, targets) in scenarios.items()
            for t in targets.values() if t.groups]
    if not rows:
        return
    print("### Where the CPU went, by thread group\n")
    print("Streaming: CPU s per 100k events; rate: CPU ms per 1k requests. loops: the proxy's event "
          "loops (nginx: its workers); tokengap_other: tokengap's spike scan, attribution and engine "
          "scrape threads; jit: the C1 and C2 compilers; gc_vm: G1's threads and the VM thread. "
          "Ranges are over rounds.\n")
    print("| scenario | target | " + " | ".join(GROUPS) + " |")
    print("|---" * (2 + len(GROUPS)) + "|")
    for sc, streaming, t in rows:
        print(f"| {sc} | {t.name} | " + " | ".join(rng(t.groups[g], 2) for g in GROUPS) + " |")
    print()


def one_way(runs, keys):
    return " / ".join(fmt(avg(r.get(k) for r in runs)) for k in keys)


def loadavg(runs):
    return f"{fmt(avg(r.get('loadavg_1m_start') for r in runs), 1)}-{fmt(avg(r.get('loadavg_1m_end') for r in runs), 1)}"


def stream_table(scenario, targets):
    print(f"### {scenario}: one-way delay of every SSE event\n")
    print("| target | one-way p50 / p99 / p99.9 (µs) | added p50 (µs) | added p99 (µs) | x nginx p50 / p99 "
          "| first event p50 / p99 (µs) | first event added p50 / p99 (µs) | CPU s / 100k events | x nginx "
          "| peak RSS (MiB) | req/s, events/s | coalesced (+ read after a client stall) | failed / requests | load avg |")
    print("|---" * 14 + "|")
    ng = targets.get("nginx")
    for t in targets.values():
        runs = t.runs
        d = t.direct
        x, cpu_x = against_nginx(t, ng)
        rate = f"{fmt(avg(r['achieved_rps'] for r in runs), 1)}, {fmt(avg(r['events_per_s'] for r in runs))}"
        coal = f"{t.coalesced} ({100 * t.coalesced / max(1, t.events):.3f} %) +{t.client_stalled} client-stalled"
        print(f"| {t.name} | {one_way(runs, ('p50_us', 'p99_us', 'p999_us'))} | {'-' if d else rng(t.a50)} "
              f"| {'-' if d else rng(t.a99)} | {x} | {one_way(runs, ('first_event_p50_us', 'first_event_p99_us'))} "
              f"| {'-' if d else rng(t.f50) + ' / ' + rng(t.f99)} | {rng(t.cpu, 2)} | {cpu_x} | {rng(t.rss)} "
              f"| {rate} | {coal} | {t.failed_cell()} | {loadavg(runs)} |")
    print()


def against_nginx(t, ng):
    """The "x nginx" cells of a row: added p50 / p99 and CPU, each as a multiple of nginx's."""
    if t.direct or t.name == "nginx" or not ng:
        return "-", "-"
    x = f"{ratio_cell(t.a50, ng.a50)} / {ratio_cell(t.a99, ng.a99)}"
    cpu_x = f"{t.cpu_mean() / ng.cpu_mean():.2f}" if t.cpu_mean() and ng.cpu_mean() else "-"
    return x, cpu_x


def rate_table(scenario, targets):
    asked = targets["direct"].runs[0].get("rate") if "direct" in targets else None
    print(f"### {scenario}: non-streaming requests, latency from the intended send to the last byte\n")
    print("| target | latency p50 / p99 / p99.9 (µs) | added p50 (µs) | added p99 (µs) | x nginx p50 / p99 "
          "| from the actual send p50 / p99 (µs) | CPU ms / 1k requests | x nginx | peak RSS (MiB) "
          f"| req/s (asked {fmt(asked)}) | failed / requests | load avg |")
    print("|---" * 12 + "|")
    ng = targets.get("nginx")
    for t in targets.values():
        runs = t.runs
        d = t.direct
        x, cpu_x = against_nginx(t, ng)
        print(f"| {t.name} | {one_way(runs, ('p50_us', 'p99_us', 'p999_us'))} | {'-' if d else rng(t.a50)} "
              f"| {'-' if d else rng(t.a99)} | {x} | {one_way(runs, ('from_send_p50_us', 'from_send_p99_us'))} "
              f"| {rng(t.cpu)} | {cpu_x} | {rng(t.rss)} | {fmt(avg(r['achieved_rps'] for r in runs), 1)} "
              f"| {t.failed_cell()} | {loadavg(runs)} |")
    print()


def verdict_added(scenario, what, tg, ref, key, limit):
    t, n = getattr(tg, key), getattr(ref, key)
    if not t or not n:
        return
    r = ratio(t, n)
    if r is None:
        print(f"- {scenario}: {what}: tokengap {mean(t):+.0f} µs, {ref.name} {mean(n):+.0f} µs (rounds "
              f"{min(n):+.0f}..{max(n):+.0f}): NO RATIO, {ref.name}'s added value is under {MIN_ADDED_US:.0f} µs "
              f"in a round (within noise of direct); compare the absolute values")
        return
    print(f"- {scenario}: {what}: tokengap {mean(t):+.0f} µs vs {ref.name} {mean(n):+.0f} µs = {r:.2f}x "
          f"(target <= {limit}x): {'PASS' if r <= limit else 'FAIL'}")


def verdict_cpu(scenario, what, tg, ref, limit, digits):
    t, n = tg.cpu_mean(), ref.cpu_mean()
    if not t or not n:
        return
    r = t / n
    loops = ""
    if tg.groups and ref.groups:
        lt, ln = avg(tg.groups["loops"]), avg(ref.groups["loops"])
        if lt and ln:
            loops = f"; the event loops alone {lt:.{digits}f} vs {ln:.{digits}f} = {lt / ln:.2f}x"
    print(f"- {scenario}: {what}: tokengap {t:.{digits}f} vs {ref.name} {n:.{digits}f} = {r:.2f}x "
          f"(target <= {limit}x): {'PASS' if r <= limit else 'FAIL'}{loops}")


def verdicts(scenarios, reference, stream_limits, stream_cpu_limit, rate_limits, rate_cpu_limit):
    if not any(reference in targets and "tokengap" in targets for _, targets in scenarios.values()):
        return
    print(f"### Targets (tokengap against {reference})\n")
    for scenario, (streaming, targets) in scenarios.items():
        tg, ref = targets.get("tokengap"), targets.get(reference)
        if not tg or not ref:
            continue
        direct = targets.get("direct")
        if streaming:
            for what, key, limit in stream_limits:
                verdict_added(scenario, what, tg, ref, key, limit)
            verdict_cpu(scenario, "CPU s per 100k events", tg, ref, stream_cpu_limit, 2)
            print(f"- {scenario}: coalesced events through tokengap: {tg.coalesced} of {tg.events}, besides "
                  f"{tg.client_stalled} read right after the load client's own loop stalled "
                  f"({reference} {ref.coalesced} +{ref.client_stalled}, "
                  f"direct {direct.coalesced if direct else '-'}) "
                  f"(target 0): {'PASS' if tg.coalesced == 0 else 'FAIL'}")
        else:
            for what, key, limit in rate_limits:
                verdict_added(scenario, what, tg, ref, key, limit)
            verdict_cpu(scenario, "CPU ms per 1k requests", tg, ref, rate_cpu_limit, 0)
        print(f"- {scenario}: failed requests through tokengap: {tg.failed} of {tg.requests} "
              f"({reference} {ref.failed}, direct {direct.failed if direct else '-'}) "
              f"(target 0): {'PASS' if tg.failed == 0 else 'FAIL'}")
    print()


def harness(rows):
    print("### The harness itself (Node client and backend; read before trusting a row)\n")
    print("| scenario | target | client CPU s | backend CPU s | client event-loop delay p99 (ms) "
          "| in flight mean / max | connections opened | aborted / unsent |")
    print("|---" * 8 + "|")
    by = defaultdict(list)
    for r in rows:
        by[(r["scenario"], r["target"])].append(r)
    for (scenario, target), runs in by.items():
        print(f"| {scenario} | {target} | {rng([r.get('client_cpu_s') for r in runs], 2)} "
              f"| {rng([r.get('backend_cpu_s') for r in runs], 2)} "
              f"| {rng([r.get('client_loop_delay_p99_ms') for r in runs], 1)} "
              f"| {fmt(avg(r.get('in_flight_mean') for r in runs))} / {max(r.get('in_flight_max') or 0 for r in runs)} "
              f"| {sum(r.get('connections_opened') or 0 for r in runs)} "
              f"| {sum(r.get('requests_aborted') or 0 for r in runs)} / {sum(r.get('requests_unsent') or 0 for r in runs)} |")
    print()


def main():
    rows = [r for r in load(sys.argv[1]) if r.get("session", "churn") == "churn"]
    by = defaultdict(list)
    order, targets_order = [], []
    for r in rows:
        by[(r["scenario"], r["target"])].append(r)
        if r["scenario"] not in order:
            order.append(r["scenario"])
        if r["target"] not in targets_order:
            targets_order.append(r["target"])
    scenarios = {}
    for sc in order:
        streaming = next(r for r in rows if r["scenario"] == sc)["mode"] != "rate"
        direct = {r["round"]: r for r in by[(sc, "direct")]}
        targets = {t: Target(t, by[(sc, t)], direct, streaming) for t in targets_order if by[(sc, t)]}
        scenarios[sc] = (streaming, targets)
        (stream_table if streaming else rate_table)(sc, targets)
    thread_table(scenarios)
    for reference in REFERENCES:
        verdicts(scenarios, *reference)
    harness(rows)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tables and verdicts of bench/overhead.sh from its results.jsonl (one JSON line per run).

Added delay = a target's one-way delay percentile minus the direct run's same percentile in the
same round (percentiles of different event populations cannot be subtracted event by event);
the tables give the mean over rounds and, in brackets, the rounds' range.
"""
import json
import sys
from collections import defaultdict
from statistics import mean


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fmt(x, digits=0):
    return "-" if x is None else f"{x:.{digits}f}"


def rng(xs, digits=0):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    if len(xs) == 1:
        return fmt(xs[0], digits)
    return f"{fmt(mean(xs), digits)} [{fmt(min(xs), digits)}..{fmt(max(xs), digits)}]"


def added(runs, direct, key):
    out = []
    for r in runs:
        d = direct.get(r["round"])
        if d is not None and r.get(key) is not None and d.get(key) is not None:
            out.append(r[key] - d[key])
    return out


def table(rows, session, title):
    by = defaultdict(list)
    loads = []
    for r in rows:
        if r["session"] != session:
            continue
        by[(r["load"], r["target"])].append(r)
        if r["load"] not in loads:
            loads.append(r["load"])
    targets = []
    for r in rows:
        if r["session"] == session and r["target"] not in targets:
            targets.append(r["target"])
    print(f"### {title}\n")
    print("| load | target | one-way p50 / p99 / p99.9 (µs) | added p50 (µs) | added p99 (µs) | added p99.9 (µs) "
          "| CPU s / 100k events | peak RSS (MiB) | coalesced | errors | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for ld in loads:
        direct = {r["round"]: r for r in by[(ld, "direct")]}
        for t in targets:
            runs = by[(ld, t)]
            if not runs:
                continue
            one_way = " / ".join(fmt(mean(r[k] for r in runs)) for k in ("p50_us", "p99_us", "p999_us"))
            a50, a99, a999 = (added(runs, direct, k) for k in ("p50_us", "p99_us", "p999_us"))
            cpu = [r.get("proxy_cpu_s_per_100k_events") for r in runs]
            rss = [r.get("proxy_peak_rss_mib") for r in runs]
            coal = sum(r["coalesced_events"] for r in runs) / max(1, sum(r["measured_events"] for r in runs))
            errors = sum(r["errors"] + r["incomplete_streams"] for r in runs)
            loadavg = [r.get("loadavg_1m") for r in runs]
            is_direct = t == "direct"
            print(f"| {ld} | {t} | {one_way} | {'-' if is_direct else rng(a50)} | {'-' if is_direct else rng(a99)} "
                  f"| {'-' if is_direct else rng(a999)} | {rng(cpu, 2)} | {rng(rss)} | {100 * coal:.3f} % "
                  f"| {errors} | {rng(loadavg, 1)} |")
            summary[(ld, t)] = dict(a50=a50 and mean(a50), a99=a99 and mean(a99), r50=a50, r99=a99,
                                    cpu=None if None in cpu else mean(cpu), errors=errors, coal=coal,
                                    events=sum(r["measured_events"] for r in runs))
    print()
    return summary


def verdicts(s):
    print("### Verdicts\n")
    for ld in ("50x20ms", "200x20ms"):
        tg, ng = s.get((ld, "tokengap")), s.get((ld, "nginx"))
        if not tg or not ng:
            continue
        for p, limit in (("a50", 1.5), ("a99", 2.0)):
            rounds = tg["r" + p[1:]] + ng["r" + p[1:]]
            if min(rounds) <= 0:
                # A negative added delay means the rounds' spread is larger than what either adds.
                print(f"- {ld}: added p{p[1:]}: tokengap {tg[p]:.0f} µs, nginx {ng[p]:.0f} µs, rounds "
                      f"{min(rounds):.0f}..{max(rounds):.0f} µs: INCONCLUSIVE (noise exceeds the difference)")
                continue
            ratio = tg[p] / ng[p]
            print(f"- {ld}: tokengap added p{p[1:]} {tg[p]:.0f} µs vs nginx {ng[p]:.0f} µs "
                  f"= {ratio:.2f}x (target <= {limit}x): {'MET' if ratio <= limit else 'MISSED'}")
        if tg["cpu"] and ng["cpu"]:
            ratio = tg["cpu"] / ng["cpu"]
            print(f"- {ld}: CPU per 100k events tokengap {tg['cpu']:.2f} s vs nginx {ng['cpu']:.2f} s "
                  f"= {ratio:.2f}x (target <= 2x): {'MET' if ratio <= 2 else 'MISSED'}")
    big = s.get(("1000x50ms", "tokengap"))
    if big:
        ok = big["errors"] == 0 and big["coal"] == 0
        print(f"- 1000 x 50 ms through tokengap (a fixed 256 MiB heap): {big['errors']} errors, "
              f"{100 * big['coal']:.3f} % of {big['events']} events coalesced: {'MET' if ok else 'MISSED'}")
    print()


def main():
    rows = load(sys.argv[1])
    s = table(rows, "main", "Direct, tokengap (JDK 17, G1, a fixed 256 MiB heap) and nginx")
    verdicts(s)
    if any(r["session"] == "gc" for r in rows):
        table(rows, "gc", "tokengap on JDK 25: G1 against generational ZGC (a fixed 256 MiB heap)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summary of a bench/soak.sh run: python3 bench/soak_report.py target/soak

Reads samples.jsonl, client.jsonl, tokengap-final.prom and the leak counts from the run's
directory; writes summary.json there and prints summary.txt: the first and last samples of heap
after GC, file descriptors, RSS and threads with their least-squares slopes (per hour, past the
first WARMUP_S), Netty's leak reports, and every request accounted for (the client's results
against tokengap's tokengap_requests_total{status} and tokengap_streams_total{outcome}).
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

WARMUP_S = 60
SERIES = ("heap_used_after_gc_kb", "fds", "rss_kb", "threads", "client_connections", "upstream_connections")


def slope_per_hour(points):
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx * 3600


def counter_by(prom_text, name, label):
    counts = Counter()
    pattern = re.compile(r'^%s\{([^}]*)\}\s+(\S+)' % re.escape(name))
    for line in prom_text.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        counts[labels.get(label, "")] += int(float(m.group(2)))
    return counts


def accounting_late(client, outcomes):
    return client["cancelled"] - outcomes["client_cancelled"]


def read_count(path):
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return None


def main(out):
    out = Path(out)
    samples = [json.loads(l) for l in (out / "samples.jsonl").read_text().splitlines() if l.strip()]
    kills = [s for s in samples if s.get("event") == "engine_killed"]
    samples = [s for s in samples if "event" not in s]
    requests = [json.loads(l) for l in (out / "client.jsonl").read_text().splitlines() if l.strip()]
    prom = (out / "tokengap-final.prom").read_text() if (out / "tokengap-final.prom").exists() else ""

    series = {}
    for key in SERIES:
        points = [(s["elapsed_s"], s[key]) for s in samples if s.get(key) is not None]
        steady = [(s["elapsed_s"], s[key]) for s in samples
                  if s.get(key) is not None and s["elapsed_s"] >= WARMUP_S and not s.get("after_load")]
        series[key] = {
            "first": points[0][1] if points else None,
            "last": points[-1][1] if points else None,
            "max": max((y for _, y in points), default=None),
            "first_after_warmup": steady[0][1] if steady else None,
            "slope_per_hour": slope_per_hour(steady),
            "samples": len(points),
        }

    client = Counter(r["result"] for r in requests)
    by_scenario = {}
    for r in requests:
        by_scenario.setdefault(r["scenario"], Counter())[r["result"]] += 1
    statuses = counter_by(prom, "tokengap_requests_total", "status")
    outcomes = counter_by(prom, "tokengap_streams_total", "outcome")

    reached = sum(client.values()) - client["connect_error"]
    streamed = sum(1 for r in requests if r.get("status") == 200)
    accounting = {
        "client_requests_reaching_tokengap": reached,
        "tokengap_requests_total": sum(statuses.values()),
        "client_streams_200": streamed,
        "tokengap_streams_total": sum(outcomes.values()),
        "client_completed": client["completed"],
        "tokengap_completed": outcomes["completed"],
        "client_cancelled": client["cancelled"],
        "tokengap_client_cancelled": outcomes["client_cancelled"],
        "client_truncated": client["truncated"],
        "tokengap_upstream_error_or_timeout": outcomes["upstream_error"] + outcomes["upstream_timeout"],
        "client_timeouts": client["client_timeout"],
        "cancels_after_tokengap_wrote_the_stream": accounting_late(client, outcomes),
    }
    leaks = {"tokengap": read_count(out / "leaks-tokengap.txt"), "simulator": read_count(out / "leaks-simulator.txt")}
    heap = series["heap_used_after_gc_kb"]
    fds = series["fds"]
    checks = {
        "no leak reports": leaks["tokengap"] == 0,
        "every request reaching tokengap counted": accounting["client_requests_reaching_tokengap"]
        == accounting["tokengap_requests_total"],
        "every stream has an outcome": accounting["client_streams_200"] == accounting["tokengap_streams_total"],
        # A client that closes after tokengap wrote the last byte (still unread in its socket) has
        # cancelled, but tokengap completed: only the sum of the two is exact.
        "completed and cancelled streams agree": accounting["client_completed"] + accounting["client_cancelled"]
        == accounting["tokengap_completed"] + accounting["tokengap_client_cancelled"],
        "cancels are outcomes": accounting["tokengap_client_cancelled"] <= accounting["client_cancelled"],
        "truncated streams are upstream errors": accounting["client_truncated"]
        == accounting["tokengap_upstream_error_or_timeout"],
        # After the load, with the streams gone, the heap after a full GC comes back down, and the
        # fds to what tokengap had before, plus its pool's idle connections to the engine.
        "heap after GC back near its first steady sample": None if heap["first_after_warmup"] is None
        else heap["last"] <= heap["first_after_warmup"] + 16 * 1024,
        "fds back to the first sample plus pooled connections": None if fds["first"] is None
        else fds["last"] - (series["upstream_connections"]["last"] or 0) <= fds["first"] + 16,
    }
    summary = {
        "duration_s": samples[-1]["elapsed_s"] if samples else 0,
        "engine_kills": len(kills),
        "series": series,
        "leak_reports": leaks,
        "client_results": dict(sorted(client.items())),
        "client_by_scenario": {k: dict(sorted(v.items())) for k, v in sorted(by_scenario.items())},
        "tokengap_requests_by_status": dict(sorted(statuses.items())),
        "tokengap_streams_by_outcome": dict(sorted(outcomes.items())),
        "accounting": accounting,
        "checks": checks,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    print("soak: %ds, %d requests, %d engine kills" % (summary["duration_s"], len(requests), len(kills)))
    print("%-22s %10s %10s %10s %16s" % ("series", "first", "last", "max", "slope/hour*"))
    for key, s in series.items():
        slope = "-" if s["slope_per_hour"] is None else "%+.1f" % s["slope_per_hour"]
        print("%-22s %10s %10s %10s %16s" % (key, s["first"], s["last"], s["max"], slope))
    print("* least squares over the samples under load after the first %ds; 'last' is after the load" % WARMUP_S)
    print("leak reports (LEAK: lines): tokengap %s, simulator %s" % (leaks["tokengap"], leaks["simulator"]))
    print("client results: %s" % summary["client_results"])
    for scenario, results in summary["client_by_scenario"].items():
        print("  %-14s %s" % (scenario, results))
    print("tokengap_requests_total by status: %s" % summary["tokengap_requests_by_status"])
    print("tokengap_streams_total by outcome: %s" % summary["tokengap_streams_by_outcome"])
    for key, value in accounting.items():
        print("  %-40s %d" % (key, value))
    for name, ok in checks.items():
        print("CHECK %-55s %s" % (name, "n/a" if ok is None else "ok" if ok else "FAIL"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/soak")

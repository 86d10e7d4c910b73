#!/usr/bin/env python3
"""The table of bench/stages.sh: STAGES.jsonl CHURN.jsonl.

Per scenario and target, the means over rounds of: the client's added one-way p50 (its p50 minus
the direct connection's in the same round), and from the shim: how late the proxy read the
events (p50, p90) and how late its writes of them returned (p50, p90), after the backend's stamp."""
import collections
import json
import sys


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def fmt(value):
    return '-' if value is None else '%.0f' % value


def main():
    stages = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    churn = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
    direct = {(c['scenario'], c['round']): c['p50_us'] for c in churn if c['target'] == 'direct'}
    client = {(c['target'], c['scenario'], c['round']): c for c in churn}
    rows = collections.OrderedDict()
    for s in stages:
        target, scenario, rnd = s['label'].split()
        rnd = int(rnd[1:])
        scenario = scenario.replace(':', '-')
        c = client.get((target, scenario, rnd))
        d = direct.get((scenario, rnd))
        added = (c['p50_us'] - d) if (c and d is not None) else None
        rows.setdefault((scenario, target), []).append((added, s, c))
    print('| scenario | target | rounds | client added p50, µs | proxy read: p50 / p90 µs after the stamp '
          '| proxy write returned: p50 / p90 µs | read to write returned, p50 µs | events seen by the shim |')
    print('|---|---|---|---|---|---|---|---|')
    for (scenario, target), items in rows.items():
        added = mean([i[0] for i in items])
        r50 = mean([i[1]['read_p50_us'] for i in items])
        r90 = mean([i[1]['read_p90_us'] for i in items])
        w50 = mean([i[1]['written_p50_us'] for i in items])
        w90 = mean([i[1]['written_p90_us'] for i in items])
        diff = (w50 - r50) if (w50 is not None and r50 is not None) else None
        events = sum(i[1]['read_events'] for i in items)
        print('| %s | %s | %d | %s | %s / %s | %s / %s | %s | %d |' % (scenario, target, len(items), fmt(added),
              fmt(r50), fmt(r90), fmt(w50), fmt(w90), fmt(diff), events))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Percentiles of one window of bench/stampshim's histograms: BEFORE AFTER [LABEL].

Each file is 2 x 20,000 little-endian uint64 counters, 1 µs buckets: row 0, how late (after the
backend's stamp) the proxy read each content event; row 1, how late its write of the event
returned. Prints one JSON line: the count and p50/p90/p99 of each row over the window."""
import json
import struct
import sys

BUCKETS = 20000


def load(path):
    with open(path, 'rb') as f:
        data = f.read()
    values = struct.unpack('<%dQ' % (2 * BUCKETS), data[:16 * BUCKETS])
    return values[:BUCKETS], values[BUCKETS:]


def pct(hist, q):
    total = sum(hist)
    if total == 0:
        return None
    rank = q * total
    seen = 0
    for us, n in enumerate(hist):
        seen += n
        if seen >= rank:
            return us
    return len(hist) - 1


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    label = sys.argv[3] if len(sys.argv) > 3 else ''
    out = {'label': label}
    for row, name in ((0, 'read'), (1, 'written')):
        hist = [a - b for a, b in zip(after[row], before[row])]
        out[name + '_events'] = sum(hist)
        for q in (0.5, 0.9, 0.99):
            out['%s_p%g_us' % (name, q * 100)] = pct(hist, q)
    print(json.dumps(out))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Latency of stats requests against a running daemon, over one kept-alive connection.

Usage: stats_load.py PORT READ_KEY REQUESTS PATH...
Prints one line per path: requests, p50, p99 and max in milliseconds (bounded: REQUESTS each).
"""
import http.client
import sys
import time

port, key, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
for path in sys.argv[4:]:
    times = []
    for i in range(count + 3):
        start = time.perf_counter()
        connection.request("GET", path, headers={"Authorization": "Bearer " + key})
        response = connection.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - start) * 1000
        if response.status != 200:
            sys.exit(f"{path}: HTTP {response.status}: {body[:200]!r}")
        if i >= 3:  # the first requests warm the caches
            times.append(elapsed)
    times.sort()
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    print(f"  {p(0.5):8.1f} ms p50 {p(0.99):8.1f} ms p99 {times[-1]:8.1f} ms max  ({count} requests)  {path.split('?')[0]} {path.split('?')[1]}")

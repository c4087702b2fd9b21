#!/usr/bin/env python3
"""Stores the 10,000 clicks ops/bench/resolve.lua resolves against (ids PREFIX0…, address
198.18.(n/250).(n%250+1), ref bench(n%100), a deep link in the URL) through POST /v1/events.
A prefix of its own for each run (resolve.sh passes one): on a kept directory, clicks with the
ids of an earlier run would be duplicates, never stored again, and once older than the
attribution window a third of the resolves (the fingerprint ones) would come back organic.

Usage: resolve_clicks.py PORT INGEST_KEY [PREFIX]   (PREFIX defaults to bc-)
"""
import json
import sys
import urllib.request

port, key = sys.argv[1], sys.argv[2]
prefix = sys.argv[3] if len(sys.argv) > 3 else "bc-"
agent = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/120.0.6099.43 Mobile Safari/537.36")
for start in range(0, 10000, 1000):
    clicks = [{"id": f"{prefix}{n}", "type": "click", "ref": f"bench{n % 100}", "campaign": "bench", "platform": "android",
               "user_agent": agent, "ip": f"198.18.{n // 250}.{n % 250 + 1}",
               "url": f"https://go.example/bench{n % 100}?deep_link_value=item-{n}"} for n in range(start, start + 1000)]
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/events", data=json.dumps(clicks).encode(),
                                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    assert urllib.request.urlopen(request).status == 202

#!/usr/bin/env python3
"""Stores the 10,000 clicks ops/bench/resolve.lua resolves against (ids bc-0…, address
198.18.(n/250).(n%250+1), ref bench(n%100), a deep link in the URL) through POST /v1/events.

Usage: resolve_clicks.py PORT INGEST_KEY
"""
import json
import sys
import urllib.request

port, key = sys.argv[1], sys.argv[2]
agent = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
         "Chrome/120.0.6099.43 Mobile Safari/537.36")
for start in range(0, 10000, 1000):
    clicks = [{"id": f"bc-{n}", "type": "click", "ref": f"bench{n % 100}", "campaign": "bench", "platform": "android",
               "user_agent": agent, "ip": f"198.18.{n // 250}.{n % 250 + 1}",
               "url": f"https://go.example/bench{n % 100}?deep_link_value=item-{n}"} for n in range(start, start + 1000)]
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/events", data=json.dumps(clicks).encode(),
                                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    assert urllib.request.urlopen(request).status == 202

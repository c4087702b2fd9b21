"""A client of ops/bench/overload.sh beside the overload: sends one small batch at a time on
each of a few connections and records how long every acknowledged (202) request took, the
latency an app whose request gets through sees. Prints one line:
PROBE requests=N accepted_requests=A accepted_events=E p50_ms=… p99_ms=… max_ms=… statuses=…
Usage: overload_probe.py PORT KEY SECONDS [CONNECTIONS [IDS_FILE]]
With IDS_FILE, the ids of every acknowledged event are appended to it, one a line."""
import http.client, json, sys, threading, time, uuid

port, key, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
connections = int(sys.argv[4]) if len(sys.argv) > 4 else 4
ids_file = sys.argv[5] if len(sys.argv) > 5 else None
lock = threading.Lock()
latencies, statuses, accepted_events, acked_ids = [], {}, [0], []


def run():
    end = time.time() + seconds
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while time.time() < end:
        ids = [str(uuid.uuid4()) for _ in range(5)]
        body = json.dumps([{"id": i, "type": "click", "ref": "probe", "campaign": "overload"} for i in ids])
        start = time.perf_counter()
        try:
            conn.request("POST", "/v1/events", body, {"Authorization": "Bearer " + key, "Content-Type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
        except Exception:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            with lock:
                statuses["error"] = statuses.get("error", 0) + 1
            continue
        took = (time.perf_counter() - start) * 1000
        with lock:
            statuses[response.status] = statuses.get(response.status, 0) + 1
            if response.status == 202:
                latencies.append(took)
                accepted_events[0] += json.loads(answer)["accepted"]
                acked_ids.extend(ids)
        if response.status != 202:
            time.sleep(min(float(response.getheader("Retry-After") or "1"), 1.0) * 0.1)


threads = [threading.Thread(target=run) for _ in range(connections)]
for t in threads: t.start()
for t in threads: t.join()
latencies.sort()
if ids_file:
    with open(ids_file, "a") as f:
        f.write("".join(i + "\n" for i in acked_ids))
pct = lambda p: latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] if latencies else float("nan")
print(f"PROBE requests={sum(v for v in statuses.values())} accepted_requests={len(latencies)} accepted_events={accepted_events[0]} "
      f"p50_ms={pct(50):.1f} p99_ms={pct(99):.1f} max_ms={max(latencies) if latencies else float('nan'):.1f} "
      f"statuses={','.join(f'{k}:{v}' for k, v in sorted(statuses.items(), key=str))}")

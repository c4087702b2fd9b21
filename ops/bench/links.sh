#!/usr/bin/env bash
# Hosted links benchmark: taps on GET /<ref> over LINKS stored links (default 100,000; each tap
# stores its click before its redirect), beside nginx answering `return 302` (this machine's
# ceiling), single-event POST /v1/events to the same daemon, and HEAD /<ref> (the link read and
# the answer alone, no click stored: what a tap adds to an ingest), at 64 connections and at 1,
# in the same run. Also times `linkpulse links import` of the links, and checks that every answered
# tap's click is stored.
#
# Usage: ops/bench/links.sh [--links N] [--duration SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. ops/bench/lib.sh  # bench_need

LINKS=100000
DURATION=10
while [ $# -gt 0 ]; do
  case "$1" in
    --links) LINKS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

bench_need wrk:wrk nginx:nginx-light
ops/install-deps.sh build
swift build -c release --product linkpulse >/dev/null
BIN=.build/release/linkpulse

WORK=$(mktemp -d /tmp/linkpulse-links-bench.XXXXXX)
NGINX_PORT=18092
LP_PORT=18093
KEY=lpi_bench_key
LP_PID=""; NGINX_PID=""
cleanup() {
  [ -n "$LP_PID" ] && kill "$LP_PID" 2>/dev/null && wait "$LP_PID" 2>/dev/null || true
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cat > "$WORK/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { return 302 https://example.com/; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" &
NGINX_PID=$!

# The links, made as an operator would: a CSV file imported beside the running daemon.
cp ops/links.example.json "$WORK/links.json"
python3 - "$WORK/links.csv" "$LINKS" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    out.write("ref,url,campaign,source,deep_link_value\n")
    for i in range(int(sys.argv[2])):
        out.write(f"l{i:07d},https://example.com/p/{i},c{i % 100:03d},bench,item-{i}\n")
PY
LINKPULSE_LOG_LEVEL=warning "$BIN" serve --port $LP_PORT --data-dir "$WORK/data" --ingest-key $KEY \
  --links-config "$WORK/links.json" > "$WORK/linkpulse.log" 2>&1 &
LP_PID=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$LP_PORT/healthz" >/dev/null && break
  kill -0 $LP_PID 2>/dev/null || { cat "$WORK/linkpulse.log" >&2; exit 1; }
  sleep 0.1
done
start=$(date +%s.%N)
"$BIN" links import "$WORK/links.csv" --data-dir "$WORK/data" --links-config "$WORK/links.json" --log-level warning >&2
IMPORT_S=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")

run() {  # name url script connections [method]
  local threads=2; [ "$4" -lt 2 ] && threads=1
  local line
  line=$(LINKS=$LINKS BATCH=1 KEY=$KEY METHOD=${5:-GET} wrk -t$threads -c"$4" -d"${DURATION}s" --timeout 5s -s "$3" "$2" | grep '^RESULT')
  echo "$1 conns=$4 $line" | tee -a "$WORK/results" >&2
}
clicks() {
  python3 - "$WORK/data/linkpulse.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("select count(*) from event_rows where type = 0 and ref like 'l%'").fetchone()[0])
PY
}
for conns in 64 1; do
  run nginx "http://127.0.0.1:$NGINX_PORT/l0000001" ops/bench/links.lua $conns
  run links "http://127.0.0.1:$LP_PORT/" ops/bench/links.lua $conns
  run ingest "http://127.0.0.1:$LP_PORT/v1/events" ops/bench/events.lua $conns
  run reads "http://127.0.0.1:$LP_PORT/" ops/bench/links.lua $conns HEAD
done
STORED=$(clicks)

python3 - "$WORK/results" "$LINKS" "$IMPORT_S" "$STORED" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    rows[(parts[0], int(fields["conns"]))] = fields
answered = sum(int(f["requests"]) - int(f["errors"]) - int(f["non2xx"]) for (name, _), f in rows.items() if name == "links")
print(f"\nHosted links benchmark: {int(sys.argv[2]):,} links (imported in {sys.argv[3]} s); "
      f"clicks stored {int(sys.argv[4]):,} for {answered:,} answered taps")
print(f"{'server':<8} {'conns':>5} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'vs ingest':>9} {'vs nginx':>8}")
for conns in (64, 1):
    for name in ("nginx", "links", "ingest", "reads"):
        f = rows[(name, conns)]
        rps = float(f["rps"])
        errors = int(f["errors"]) + int(f["non2xx"])
        vs_ingest = f"{rps / float(rows[('ingest', conns)]['rps']) * 100:.0f}%" if name in ("links", "reads") else ""
        vs_nginx = f"{rps / float(rows[('nginx', conns)]['rps']) * 100:.0f}%" if name != "nginx" else ""
        print(f"{name:<8} {conns:>5} {rps:>10.0f} {float(f['p50_ms']):>8.2f} {float(f['p99_ms']):>8.2f} {errors:>6} {vs_ingest:>9} {vs_nginx:>8}")
PY

#!/usr/bin/env bash
# Ingest benchmark: the release daemon against nginx answering `return 204` to the same POSTs
# (this machine's ceiling), driven by wrk on loopback, in the same run.
#
# Usage: ops/bench/ingest.sh [--prefill N] [--duration SECONDS] [--durability full|normal] [--bin BIN] [--baseline BIN] [--baseline-key flag]
#   --prefill N     first loads N events through the API (e.g. 10000000), then measures
#   --bin BIN       measures BIN instead of this checkout's release build (which runs first: with
#                   --baseline, swapping the two shows what the order does)
#   --baseline BIN  also measures another linkpulse binary (e.g. a build of the previous commit)
#                   the same way in the same run, each on a fresh data directory: an A/B test
#   --baseline-key flag  the baseline sends the --ingest-key flag's key even when it could make a
#                   stored one (with --baseline .build/release/linkpulse: what a stored key costs)
#
# Prints accepted req/s and events/s (a refused request counts in errors, not in the rates),
# p50/p99 latency, the ratio to nginx, and each daemon's peak RSS (with its anonymous and
# file-backed parts).
set -euo pipefail
cd "$(dirname "$0")/../.."
. ops/bench/lib.sh  # bench_paced_seconds

PREFILL=0
DURATION=10
DURABILITY=full
BIN=.build/release/linkpulse
BASELINE=""
BASELINE_KEY=stored
while [ $# -gt 0 ]; do
  case "$1" in
    --prefill) PREFILL="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --durability) DURABILITY="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    --baseline-key) BASELINE_KEY="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

bench_need wrk:wrk nginx:nginx-light
ops/install-deps.sh build
swift build -c release --product linkpulse >/dev/null

WORK=$(mktemp -d /tmp/linkpulse-bench.XXXXXX)
NGINX_PORT=18090
LP_PORT=18091
KEY=lpi_bench_key
LP_PID=""; NGINX_PID=""; SAMPLER_PID=""
cleanup() {
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
  [ -n "$LP_PID" ] && kill "$LP_PID" 2>/dev/null && wait "$LP_PID" 2>/dev/null || true
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

for port in $NGINX_PORT $LP_PORT; do
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
    echo "port $port is already in use; stop whatever listens there first" >&2
    exit 1
  fi
done

cat > "$WORK/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_max_body_size 2m;
  client_body_buffer_size 1m;
  keepalive_requests 10000000;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { return 204; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" &
NGINX_PID=$!

# run NAME URL BATCH CONNECTIONS: one wrk scenario, its RESULT line kept in $WORK/results (a
# daemon's run first checks that it still lives).
run() {
  local line
  if [ "$1" != nginx ]; then
    kill -0 $LP_PID 2>/dev/null || { echo "linkpulse died:" >&2; cat "$WORK/linkpulse.log" >&2; exit 1; }
  fi
  local threads=2; [ "$4" -lt 2 ] && threads=1
  line=$(BATCH=$3 KEY=$RUN_KEY wrk -t$threads -c"$4" -d"${DURATION}s" --timeout 5s -s ops/bench/events.lua "$2" | grep '^RESULT')
  echo "$1 batch=$3 conns=$4 $line" | tee -a "$WORK/results" >&2
}

# measure NAME BIN: starts BIN on a fresh data directory, runs the linkpulse scenarios back to
# back, records peak RSS in $WORK/rss_NAME, stops it.
measure() {
local NAME=$1 BIN=$2
rm -rf "$WORK/data" "$WORK/rss_kb"
LINKPULSE_LOG_LEVEL=warning "$BIN" serve --port $LP_PORT --data-dir "$WORK/data" \
  --ingest-key $KEY --durability "$DURABILITY" > "$WORK/linkpulse.log" 2>&1 &
LP_PID=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$LP_PORT/healthz" >/dev/null && break
  kill -0 $LP_PID 2>/dev/null || { cat "$WORK/linkpulse.log" >&2; exit 1; }
  sleep 0.1
done

# The key the load sends: a stored key made beside the running daemon when the build has them
# (`linkpulse keys`: a request's key is then looked up and its use noted, as in production),
# else the flag's key (builds from before stored keys).
RUN_KEY=$KEY
if { [ "$NAME" = linkpulse ] || [ "$BASELINE_KEY" != flag ]; } && "$BIN" --help 2>/dev/null | grep -q "^  keys "; then
  RUN_KEY=$("$BIN" keys create --kind ingest --name bench --data-dir "$WORK/data" --log-level warning | tail -1)
  for _ in $(seq 1 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $RUN_KEY" "http://127.0.0.1:$LP_PORT/v1/key")" = 200 ] && break
    sleep 0.05
  done
fi
echo "$NAME: the load sends $([ "$RUN_KEY" = "$KEY" ] && echo "the --ingest-key flag's key" || echo "a stored key (linkpulse keys create)")" >&2

# Resident memory of the daemon, sampled every 100 ms (one line a sample, in KiB: resident,
# then its anonymous and file-backed parts).
( while kill -0 $LP_PID 2>/dev/null; do
    awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^RssFile/ {f = $2} END {if (r) print r, a, f}' /proc/$LP_PID/status 2>/dev/null >> "$WORK/rss_kb"
    sleep 0.1
  done ) &
SAMPLER_PID=$!

# event_rows, not the events view: the view also reads sealed blocks through the daemon's
# virtual table, which a plain sqlite3 does not have (a fresh run seals nothing).
stored() {
  python3 - "$WORK/data/linkpulse.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("select coalesce(max(seq), 0) from event_rows").fetchone()[0])
PY
}

if [ "$PREFILL" -gt 0 ]; then
  echo "prefilling $PREFILL events through the API..." >&2
  start=$(date +%s)
  while [ "$(stored)" -lt "$PREFILL" ]; do
    BATCH=1000 KEY=$RUN_KEY wrk -t2 -c16 -d20s -s ops/bench/events.lua "http://127.0.0.1:$LP_PORT/v1/events" >/dev/null
  done
  echo "prefilled $(stored) events in $(( $(date +%s) - start )) s; waiting for the id index to catch up" >&2
  sleep 5
fi
# Only the samples taken during the measured runs count.
touch "$WORK/rss_kb"
RSS_FROM=$(wc -l < "$WORK/rss_kb")

# Back to back, the same for every build: a daemon's derived work has no idle time between
# its scenarios (nginx's ceiling is measured before any daemon starts).
run "$NAME" "http://127.0.0.1:$LP_PORT/v1/events" 1 64
run "$NAME" "http://127.0.0.1:$LP_PORT/v1/events" 1 1
run "$NAME" "http://127.0.0.1:$LP_PORT/v1/events" 100 64
tail -n +"$((RSS_FROM + 1))" "$WORK/rss_kb" | sort -n | tail -1 > "$WORK/rss_$NAME"
echo "$NAME: $(stored) events stored; commits held by --ingest-pacing: $(bench_paced_seconds $LP_PORT) s" >> "$WORK/stored"
kill $SAMPLER_PID 2>/dev/null || true; SAMPLER_PID=""
kill $LP_PID 2>/dev/null && wait $LP_PID 2>/dev/null || true; LP_PID=""
}
# nginx's ceiling, first, with no daemon running.
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && break; sleep 0.05; done
RUN_KEY=$KEY
run nginx "http://127.0.0.1:$NGINX_PORT/v1/events" 1 64
run nginx "http://127.0.0.1:$NGINX_PORT/v1/events" 1 1
run nginx "http://127.0.0.1:$NGINX_PORT/v1/events" 100 64
measure linkpulse "$BIN"
[ -n "$BASELINE" ] && measure baseline "$BASELINE"

python3 - "$WORK/results" "$WORK" "$DURABILITY" <<'PY'
import os, sys
rows = []
for line in open(sys.argv[1]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    rows.append((parts[0], int(fields["batch"]), int(fields["conns"]), fields))
print(f"\nIngest benchmark (durability={sys.argv[3]}); {open(sys.argv[2] + '/stored').read().strip()}")
print(f"{'server':<10} {'events/req':>10} {'conns':>5} {'req/s':>10} {'events/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'vs nginx':>8}")
ceiling = {}
for name, batch, conns, f in sorted(rows, key=lambda r: (r[1], -r[2], r[0] != "nginx", r[0] != "linkpulse")):
    rps = float(f["rps"])
    if name == "nginx":
        ceiling[(batch, conns)] = rps
    ratio = rps / ceiling[(batch, conns)] if name != "nginx" and (batch, conns) in ceiling else None
    errors = int(f["errors"]) + int(f["non2xx"])  # rps counts accepted requests only
    print(f"{name:<10} {batch:>10} {conns:>5} {rps:>10.0f} {rps * batch:>11.0f} {float(f['p50_ms']):>8.2f} {float(f['p99_ms']):>8.2f} {errors:>6} {('%.0f%%' % (ratio * 100)) if ratio else '':>8}")
for name in ("linkpulse", "baseline"):
    path = f"{sys.argv[2]}/rss_{name}"
    if os.path.exists(path):
        kb = [int(x) for x in open(path).read().split()] or [0]
        parts = f" (anonymous {kb[1] / 1024:.1f} MB, file-backed {kb[2] / 1024:.1f} MB)" if len(kb) == 3 else ""
        print(f"{name} peak RSS under load: {kb[0] / 1024:.1f} MB{parts}")
PY

#!/usr/bin/env bash
# Deferred deep linking benchmark: `POST /v1/resolve` latency at 1 and 64 connections on an
# installation of N generated events, beside single-event ingest (`POST /v1/events`) measured
# the same way in the same run (the same writer commits both; a resolve also waits for the
# attribution follower and reads its answer).
#
# Usage: ops/bench/resolve.sh [--events N] [--duration SECONDS] [--keep DIR] [--bin BIN]
#   --events N    events generated first (default 10000000: 90 days, 10,000 refs, 100 campaigns)
#   --keep DIR    generate into DIR once and reuse it (generation takes minutes); each run adds
#                 the bench's own clicks and resolves to it
#   --bin BIN     run BIN (an earlier build, for an A/B on the same DIR) instead of this release build
#
# Before measuring it stores 10,000 clicks with known ids and addresses (ids bc<run>-0…), so that a
# third of the resolves match by install referrer, a third by fingerprint, a third are organic
# (ops/bench/resolve.lua). Prints p50/p99 per scenario, the ratio of resolve to ingest, the
# daemon's CPU time per request (derived work included), and checks that every answer was a 200.
set -euo pipefail
cd "$(dirname "$0")/../.."
. ops/bench/lib.sh

EVENTS=10000000; DURATION=15; KEEP=""; OTHER_BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --bin) OTHER_BIN="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

bench_prepare resolve
[ -n "$OTHER_BIN" ] && BIN=$OTHER_BIN
bench_need_wrk
PORT=18093
if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  echo "== generating $EVENTS events into $DATA" >&2
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days 90 --refs 10000 --campaigns 100 --no-rollup --log-level warning
fi
# Resolves come from one address here: the per-address limit is off.
bench_serve $PORT --resolve-rate 0
KEY=$INGEST_KEY
STORED=$(sqlite3 "file:$DATA/linkpulse.sqlite?mode=ro" "select max(seq) from event_rows")
echo "== $STORED events stored; storing the bench's 10,000 clicks" >&2
# Ids of this run's own (see resolve_clicks.py).
PREFIX="bc$(date +%s)-"
python3 ops/bench/resolve_clicks.py "$PORT" "$KEY" "$PREFIX"
# Before each scenario, the derived work of the ones before it is let finish (attribution and
# rollups caught up, at most 90 s): each is measured on its own, not on the digest of the
# previous one's events (64 connections of ingest store about 200,000 in 20 s).
settle() {
  local metrics
  for _ in $(seq 180); do
    metrics=$(curl -s "http://127.0.0.1:$PORT/metrics")
    if grep -Eq '^linkpulse_attribution_backlog_events 0(\.0)?$' <<<"$metrics" \
       && grep -Eq '^linkpulse_rollup_backlog_events 0(\.0)?$' <<<"$metrics"; then return 0; fi
    sleep 0.5
  done
  echo "the derived work did not catch up within 90 s; measuring anyway" >&2
}

# The daemon's own disk writes over the runs (id index merges and folds, WALs, checkpoints),
# per event stored meanwhile.
WRITTEN0=$(awk '/^write_bytes/ {print $2}' "/proc/$LP_PID/io")
SEQ0=$(sqlite3 "file:$DATA/linkpulse.sqlite?mode=ro" "select max(seq) from event_rows")
RESULTS=$(mktemp)
EXTRA_CLEANUP+=("$RESULTS")
# The daemon's CPU time so far (user + system), in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$LP_PID/stat"; }
run() {  # name script path connections
  local threads=2; [ "$4" -lt 2 ] && threads=1
  local line before after
  settle
  before=$(cpu_ticks)
  line=$(BATCH=1 KEY=$KEY CLICKS=10000 PREFIX=$PREFIX wrk -t$threads -c"$4" -d"${DURATION}s" --timeout 5s -s "$2" "http://127.0.0.1:$PORT$3" | grep '^RESULT')
  after=$(cpu_ticks)
  # CPU per request (the daemon's, derived work included): steadier than latency on a noisy machine.
  echo "$1 conns=$4 $line cpu_ticks=$((after - before)) ticks_per_s=$(getconf CLK_TCK)" | tee -a "$RESULTS" >&2
}
run ingest ops/bench/events.lua /v1/events 1
run resolve ops/bench/resolve.lua /v1/resolve 1
run ingest ops/bench/events.lua /v1/events 64
run resolve ops/bench/resolve.lua /v1/resolve 64

curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^linkpulse_resolve_answers_total|^linkpulse_store_id_merge_step_duration_seconds_(sum|count)' >&2 || true
WRITTEN1=$(awk '/^write_bytes/ {print $2}' "/proc/$LP_PID/io")
SEQ1=$(sqlite3 "file:$DATA/linkpulse.sqlite?mode=ro" "select max(seq) from event_rows")
echo "disk writes of the daemon during the runs: $(( (WRITTEN1 - WRITTEN0) / 1048576 )) MiB for $(( SEQ1 - SEQ0 )) events stored, $(( (WRITTEN1 - WRITTEN0) / (SEQ1 - SEQ0 + 1) )) bytes an event" >&2
python3 - "$RESULTS" "$STORED" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    rows[(parts[0], int(fields["conns"]))] = fields
print(f"\nResolve benchmark, {int(sys.argv[2]):,} events stored before the run")
print(f"{'scenario':<10} {'conns':>5} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'p99 / ingest p99':>17} {'CPU us/req':>11}")
failed = False
for (name, conns), f in sorted(rows.items(), key=lambda r: (r[0][1], r[0][0])):
    errors = int(f["errors"]) + int(f["non2xx"])
    failed |= errors > 0
    ratio = ""
    if name == "resolve" and ("ingest", conns) in rows:
        ratio = f"{float(f['p99_ms']) / float(rows[('ingest', conns)]['p99_ms']):.2f}"
    cpu_us = float(f["cpu_ticks"]) / float(f["ticks_per_s"]) * 1e6 / max(int(f["requests"]), 1)
    print(f"{name:<10} {conns:>5} {float(f['rps']):>9.0f} {float(f['p50_ms']):>8.2f} {float(f['p99_ms']):>8.2f} {errors:>6} {ratio:>17} {cpu_us:>11.0f}")
print("targets: resolve p99 <= 5 ms at 1 connection, <= 20 ms at 64")
sys.exit(1 if failed else 0)
PY

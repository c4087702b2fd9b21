#!/usr/bin/env bash
# Overload: the daemon's capacity for single events and for 100-event
# batches, then five times that offered for 60 s each, while a probe client measures the
# latency of the requests that get through and the daemon's RSS is sampled.
#
# Usage: ops/bench/overload.sh [--duration SECONDS] [--factor N] [--connections N] [--serve-args "ARGS"]
#   defaults: 60 s per overload phase, 5 x capacity, 1,000 connections; --serve-args adds
#   `serve` flags (e.g. "--ingest-pacing off").
#
# How the load is offered: capacity is what 64 connections without pause get through (wrk).
# The overload phases open --connections connections, each pausing between its response and
# its next request so that together they offer --factor x capacity (wrk's delay()): while
# the daemon sheds fast the offered rate holds, and the rate wrk reached is printed beside the
# target (on 2 cores wrk shares the CPU with the daemon and may not reach it).
#
# Targets: only 202, 429 or 503 with Retry-After; accepted requests' p99 <= 200 ms (the
# probe's); peak RSS <= 150 MB; afterwards the events stored equal the events acknowledged,
# each id once.
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=60; FACTOR=5; CONNECTIONS=1000; KEEP=""; SERVE_ARGS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --factor) FACTOR="$2"; shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    --serve-args) SERVE_ARGS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_need_wrk
bench_prepare overload
PORT=18096
KEY=lpi_overload_bench_key
ulimit -n 65536 2>/dev/null || true
# shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
$BIN serve --data-dir "$DATA" --port $PORT --ingest-key $KEY --read-key lpr_overload_bench_key --log-level warning $SERVE_ARGS &
LP_PID=$!
for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
RSS_LOG="$DATA/rss.log"
( while kill -0 "$LP_PID" 2>/dev/null; do awk '/VmRSS/ {print $2}' /proc/$LP_PID/status >> "$RSS_LOG" 2>/dev/null || true; sleep 0.5; done ) &
RSS_PID=$!

field() { sed -n "s/.*[ ^]$2=\([^ ]*\).*/\1/p" "$1" | tail -1; }
ACKED=0
# phase NAME BATCH CONNECTIONS SECONDS DELAY_MS: one wrk run; prints its figures.
phase() {
  local out="$DATA/$1.out"
  BATCH=$2 KEY=$KEY DELAY_MS=$5 timeout $(($4 + 60)) wrk -t2 -c"$3" -d"$4s" --timeout 10s -s ops/bench/overload.lua \
    "http://127.0.0.1:$PORT/v1/events" > "$out" 2>&1 || true
  ACKED=$((ACKED + $(field "$out" accepted)))
}

echo "== capacity (64 connections, 10 s)"
phase capacity-single 1 64 10 0
phase capacity-batch 100 64 10 0
CAP_SINGLE=$(field "$DATA/capacity-single.out" rps); CAP_BATCH=$(field "$DATA/capacity-batch.out" rps)
printf "   single events: %.0f requests/s; 100-event batches: %.0f requests/s (%.0f events/s)\n" \
  "$CAP_SINGLE" "$CAP_BATCH" "$(python3 -c "print($CAP_BATCH * 100)")"

overload() {  # NAME BATCH CAPACITY
  local target delay
  target=$(python3 -c "print($3 * $FACTOR)")
  delay=$(python3 -c "print(max(1, int($CONNECTIONS / ($target) * 1000)))")
  echo "== $1: $FACTOR x capacity = $(printf %.0f "$target") requests/s offered by $CONNECTIONS connections (each pausing $delay ms), $DURATION s"
  python3 ops/bench/overload_probe.py $PORT $KEY "$DURATION" 4 "$DATA/probe-ids.txt" > "$DATA/$1.probe" &
  local probe=$!
  phase "$1" "$2" "$CONNECTIONS" "$DURATION" "$delay"
  wait $probe || true
  ACKED=$((ACKED + $(field "$DATA/$1.probe" accepted_events)))
  local out="$DATA/$1.out"
  printf "   offered %.0f requests/s (%.1f x capacity); answers: 202 %s, 429 %s, 503 %s (with Retry-After: %s), other %s %s; wrk p99 %s ms\n" \
    "$(field "$out" rps)" "$(python3 -c "print($(field "$out" rps) / $3)")" "$(field "$out" s202)" "$(field "$out" s429)" \
    "$(field "$out" s503)" "$(field "$out" retry_after)" "$(field "$out" other)" "$(field "$out" other_status)" "$(field "$out" p99_ms)"
  echo "   probe (4 connections, 5-event batches): $(sed 's/^PROBE //' "$DATA/$1.probe")"
  sleep 5
}
overload overload-single 1 "$CAP_SINGLE"
overload overload-batch 100 "$CAP_BATCH"

kill "$RSS_PID" 2>/dev/null || true
PACED=$(bench_paced_seconds $PORT)
kill "$LP_PID"; wait "$LP_PID" 2>/dev/null || true; LP_PID=""
echo "== commits held by --ingest-pacing: $PACED s in all"
# The stored rows as the sqlite3 shell reads them (the events view needs linkpulse's
# event_archive table; these events happened now, so none is sealed): ids as stored, a
# lower-case UUID as its 16 bytes, compared by their hex digits.
read ROWS DISTINCT < <(sqlite3 -separator " " "$DATA/linkpulse.sqlite" "SELECT count(*), count(DISTINCT event_id) FROM event_rows")
PROBE_IDS=$(wc -l < "$DATA/probe-ids.txt")
PROBE_FOUND=$(sqlite3 "$DATA/linkpulse.sqlite" ".mode csv" "CREATE TEMP TABLE acked (id TEXT)" ".import $DATA/probe-ids.txt acked" \
  "CREATE TEMP TABLE stored AS SELECT lower(hex(event_id)) AS digits FROM event_rows WHERE typeof(event_id) = 'blob' AND length(event_id) = 16" \
  "CREATE INDEX temp.stored_digits ON stored (digits)" \
  "SELECT count(*) FROM acked JOIN stored ON stored.digits = replace(acked.id, '-', '')")
echo "== after: $ROWS events stored, $DISTINCT distinct ids; $ACKED acknowledged in answers wrk and the probe read"
echo "   (wrk stops listening at its deadline: events of requests still in flight then are stored but not counted as acknowledged)"
echo "   the probe's $PROBE_IDS acknowledged ids: $PROBE_FOUND stored (each once: $([ "$ROWS" = "$DISTINCT" ] && echo yes || echo NO))"
[ "$ROWS" = "$DISTINCT" ] && [ "$ROWS" -ge "$ACKED" ] && [ "$PROBE_FOUND" = "$PROBE_IDS" ] \
  && echo "   nothing acknowledged is missing, no id is stored twice" || echo "   MISMATCH"
echo "   peak RSS of the daemon: $(sort -n "$RSS_LOG" | tail -1 | awk '{printf "%.0f", $1 / 1024}') MB (target <= 150 MB)"

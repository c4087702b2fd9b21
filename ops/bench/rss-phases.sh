#!/usr/bin/env bash
# Peak RSS of the daemon by phase of ingest load, for A/B runs of memory changes: for each binary
# given (in the order given; repeat them to alternate, e.g. A B B A), a fresh daemon on a fresh
# data directory takes 10 s of single events on 64 connections, 10 s on one connection, then
# 10 s of 100-event batches on 64 connections (ops/bench/events.lua), while its RSS is sampled
# every 100 ms. Prints each run's request rates and the peak RSS of each phase ("end": the 3 s
# after the load, when the last rollup pass runs).
#
# Usage: ops/bench/rss-phases.sh BIN [BIN...]     e.g. .build/release/linkpulse /tmp/linkpulse-before
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || { echo "usage: $0 BIN [BIN...]" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
PORT=18093
WORK=$(mktemp -d /tmp/linkpulse-rss.XXXXXX)
PID=""; SAMPLER=""
cleanup() {
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null || true
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

for BIN in "$@"; do
  rm -rf "$WORK/data" "$WORK/rss"
  LINKPULSE_LOG_LEVEL=warning "$BIN" serve --port $PORT --data-dir "$WORK/data" --ingest-key k > "$WORK/log" 2>&1 &
  PID=$!
  for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  ( while kill -0 $PID 2>/dev/null; do
      echo "$(awk '/VmRSS/ {print $2}' /proc/$PID/status 2>/dev/null)" >> "$WORK/rss"; sleep 0.1
    done ) &
  SAMPLER=$!
  phase() { echo "PHASE $1" >> "$WORK/rss"; }
  rates=""
  for spec in "single64 1 64 2" "single1 1 1 1" "batch 100 64 2"; do
    set -- $spec
    phase "$1"
    rate=$(BATCH=$2 KEY=k wrk -t$4 -c$3 -d10s --timeout 5s -s ops/bench/events.lua "http://127.0.0.1:$PORT/v1/events" \
      | awk '/^RESULT/ { for (i = 1; i <= NF; i++) if ($i ~ /^rps=/) print substr($i, 5) }')
    rates="$rates $1=${rate}req/s"
  done
  phase end; sleep 3
  kill $SAMPLER 2>/dev/null || true; SAMPLER=""
  kill $PID 2>/dev/null && wait $PID 2>/dev/null || true; PID=""
  peaks=$(awk '/^PHASE/ { p = $2; next } $1 != "" { if ($1 > m[p]) m[p] = $1 }
    END { printf "single64 %d MB, single1 %d MB, batch %d MB, end %d MB", m["single64"]/1024, m["single1"]/1024, m["batch"]/1024, m["end"]/1024 }' "$WORK/rss")
  echo "$BIN:$rates; peak RSS: $peaks"
done

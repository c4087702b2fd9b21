#!/usr/bin/env bash
# Raw-event retention: how long `--retention-days` takes to delete the
# raw events past it and what it costs ingest meanwhile, how much space comes back, and whether
# the events database stops growing when every event that arrives is already past its time.
#
# Usage: ops/bench/retention.sh [--events N] [--duration SECONDS] [--steady SECONDS] [--pace N]
#   defaults: 2,000,000 generated events over 60 days (10,000 refs, 100 campaigns) in a new
#   directory, 30 days kept; a 30 s batched load beside the deletion; 120 s of each steady
#   load, paced to 100 batches of 100 events a second (a rate the rollups keep up with: events
#   are deleted only once counted, see docs/performance.md, Freshness).
#
# Prints, each beside the same run's baseline:
#   1. the deletion: events deleted and how long it took, the batched ingest rate beside it
#      (baseline: the same load on the same installation with retention off), and the files'
#      sizes before and after;
#   2. the steady state: a paced batched load of events that all happened 45 days ago (late
#      events, as phones that were offline send them), the events database's size sampled
#      every 10 s, with retention on, then (baseline) off: with retention on it must stop growing.
set -euo pipefail
cd "$(dirname "$0")/../.."

EVENTS=2000000; DURATION=30; STEADY=120; PACE=100; KEEP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --steady) STEADY="$2"; shift 2 ;;
    --pace) PACE="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_need_wrk
bench_prepare retention
PORT=18096
WORK=$(mktemp -d /tmp/linkpulse-retention-work.XXXXXX)
EXTRA_CLEANUP+=("$WORK")
mb() { python3 -c "import os; print(f'{os.path.getsize(\"$1\") / 1048576:.0f}' if os.path.exists(\"$1\") else '0')"; }
sizes() {
  echo "events $(mb "$DATA/linkpulse.sqlite") MB (WAL $(mb "$DATA/linkpulse.sqlite-wal") MB), attribution $(mb "$DATA/linkpulse-attribution.sqlite") MB, rollups $(mb "$DATA/linkpulse-rollups.sqlite") MB, id index $(mb "$DATA/linkpulse-ids.sqlite") MB"
}
stop() { kill "$LP_PID"; wait "$LP_PID" 2>/dev/null || true; LP_PID=""; }
load() {  # seconds output [AGE_DAYS]: flat out, or paced to PACE batches a second with AGE_DAYS
  local pacing=0
  [ -n "${3:-}" ] && pacing=$((8000 / PACE))
  DELAY_MS=$pacing AGE_DAYS=${3:-} BATCH=100 KEY=$INGEST_KEY wrk -t1 -c8 -d"$1s" --timeout 10s -s ops/bench/events.lua "http://127.0.0.1:$PORT/v1/events" > "$2" 2>&1
}
metric() { curl -s "http://127.0.0.1:$PORT/metrics" | awk -v name="$1" '$1 == name { printf "%s", $2; found=1 } END { if (!found) print 0 }'; }
deleted() { metric 'linkpulse_retention_deleted_total{what="events"}' | cut -d. -f1; }
events() { bench_stored_events "$DATA/linkpulse.sqlite"; }

echo "generating $EVENTS events over 60 days into $DATA"
# Retention of raw rows as ingest stores them: nothing is sealed here (--seal-after-days 0), so
# the space given back is that of the rows themselves (sealed events take a third of it).
$BIN generate --data-dir "$DATA" --events "$EVENTS" --days 60 --refs 10000 --campaigns 100 --seal-after-days 0 >/dev/null
echo "== installation: $(events) events; $(sizes)"

bench_serve $PORT --rollup-interval 10s --seal-after-days 0
load "$DURATION" "$WORK/baseline.out"
stop
BEFORE_EVENTS=$(events); BEFORE_MB=$(mb "$DATA/linkpulse.sqlite")

echo "== 1. deleting what is older than 30 days, beside a ${DURATION} s batched load"
bench_serve $PORT --rollup-interval 10s --retention-days 30 --retention-interval 5s --seal-after-days 0
load "$DURATION" "$WORK/during.out" &
LOAD_PID=$!
LAST=0; STILL=0
while [ "$STILL" -lt 4 ]; do  # until the count has stood still for 4 samples (10 s) after moving
  sleep 2.5
  N=$(deleted)
  if [ "$N" -gt 0 ] && [ "$N" -eq "$LAST" ]; then STILL=$((STILL + 1)); else STILL=0; fi
  LAST=$N
done
RUNS=$(metric linkpulse_retention_raw_run_duration_seconds_count); SPENT=$(metric linkpulse_retention_raw_run_duration_seconds_sum)
wait $LOAD_PID || true
stop
AFTER_EVENTS=$(events); AFTER_MB=$(mb "$DATA/linkpulse.sqlite")
echo "   deleted $LAST raw events; the retention runs took $(python3 -c "print(f'{$SPENT:.1f}')") s in all ($RUNS runs, every 5 s): $(python3 -c "print(f'{$LAST / max($SPENT, 0.001):,.0f}')") events deleted a second"
echo "   batched ingest beside it: $(bench_batched_rate "$WORK/during.out") events/s (baseline, the same load with retention off: $(bench_batched_rate "$WORK/baseline.out") events/s)"
echo "   events database: $BEFORE_MB MB for $BEFORE_EVENTS events before, $AFTER_MB MB for $AFTER_EVENTS after ($(python3 -c "print(f'{$BEFORE_MB * 1048576 / $BEFORE_EVENTS:.0f} and {$AFTER_MB * 1048576 / $AFTER_EVENTS:.0f}')") bytes an event), $(sqlite3 "$DATA/linkpulse.sqlite" "PRAGMA freelist_count") free pages kept for reuse; $(sizes)"

steady() {  # label, then serve arguments
  local label=$1; shift
  bench_serve $PORT --rollup-interval 5s --retention-interval 5s --seal-after-days 0 "$@"
  local first; first=$(events)
  load "$STEADY" "$WORK/steady-$label.out" 45 &
  local pid=$! series="" t=0
  while kill -0 $pid 2>/dev/null; do
    series="$series $(mb "$DATA/linkpulse.sqlite")"
    sleep 10; t=$((t + 10))
  done
  wait $pid || true
  sleep 12  # a last rollup and retention run
  series="$series $(mb "$DATA/linkpulse.sqlite")"
  local gone; gone=$(deleted)
  stop
  echo "   $label: $(bench_batched_rate "$WORK/steady-$label.out") events/s offered and stored, $gone deleted meanwhile, $(( $(events) - first )) more events kept; events database MB every 10 s:$series"
}
echo "== 2. a steady paced batched load (about $((PACE * 100)) events/s) of events that happened 45 days ago, ${STEADY} s each"
steady "retention 30 days" --retention-days 30
steady "baseline, kept forever" --retention-days 0

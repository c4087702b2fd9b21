#!/usr/bin/env bash
# Start-up benchmark: how long `linkpulse serve` takes from launch to
# answering /healthz on an installation of many events, a start after a clean stop (the id
# filter loaded as saved, `data/linkpulse-ids.filter`) beside a start without the saved filter
# (built from every id of the index, as after a crash, and as every start did before).
#
# Usage: ops/bench/startup.sh [--events N] [--keep DIR] [--starts K] [--baseline BIN]
#   defaults: 10,000,000 generated events, 3 starts of each kind (the median is printed).
#   --keep DIR     generate into DIR once and reuse it on later runs (generation takes minutes).
#   --baseline BIN another linkpulse binary (e.g. a release build of an earlier commit), whose
#                  starts are timed on the same directory and printed beside.
# Each start is stopped with SIGTERM; the time from the signal to the exit is printed too (a
# clean stop now writes the filter).
set -euo pipefail
cd "$(dirname "$0")/../.."

EVENTS=10000000; KEEP=""; STARTS=3; BASELINE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --starts) STARTS="$2"; shift 2 ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_prepare startup
PORT=18097
seconds() { python3 -c 'import time; print(time.time())'; }

echo "== data: $EVENTS events ($DATA)"
if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --log-level warning
fi
# Rollups caught up first, so that every start below does the same work.
$BIN rollup --data-dir "$DATA" --log-level warning > /dev/null

# start BINARY KEEP_FILTER: one start; prints "listening_s stop_s".
start() {
  [ "$2" = yes ] || rm -f "$DATA/linkpulse-ids.filter"
  local t0 t1 t2 t3
  t0=$(seconds)
  "$1" serve --data-dir "$DATA" --port $PORT --ingest-key lpi_startup_bench --log-level warning > "$DATA/serve.log" 2>&1 &
  LP_PID=$!
  until curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz"; do
    kill -0 "$LP_PID" 2>/dev/null || { echo "the daemon exited; its log:" >&2; cat "$DATA/serve.log" >&2; exit 1; }
    sleep 0.02
  done
  t1=$(seconds)
  sleep 1
  t2=$(seconds)
  kill -TERM "$LP_PID"; wait "$LP_PID" || true
  t3=$(seconds)
  LP_PID=""
  python3 -c "print(f'{$t1 - $t0:.3f} {$t3 - $t2:.3f}')"
}

# series LABEL BINARY KEEP_FILTER: STARTS starts after one to set up; prints their medians.
series() {
  start "$2" no > /dev/null   # leaves a saved filter behind when the build saves one
  local runs=()
  for _ in $(seq "$STARTS"); do runs+=("$(start "$2" "$3")"); done
  printf '%s\n' "${runs[@]}" | python3 -c "
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin]
up = statistics.median(r[0] for r in rows); down = statistics.median(r[1] for r in rows)
print(f'   $1: listening after {up:.2f} s (median of {len(rows)}: ' + ', '.join(f'{r[0]:.2f}' for r in rows) + f'), SIGTERM to exit {down:.2f} s')
print(up, file=open('$DATA/$1.median', 'w'))"
}

echo "== this build"
series saved "$BIN" yes
series built "$BIN" no
python3 -c "print(f'   a start with the saved filter takes {float(open(\"$DATA/saved.median\").read()) / float(open(\"$DATA/built.median\").read()):.2f}x the time of one that builds it')"
if [ -n "$BASELINE" ]; then
  echo "== baseline $BASELINE"
  series baseline "$BASELINE" no
  python3 -c "print(f'   this build after a clean stop takes {float(open(\"$DATA/saved.median\").read()) / float(open(\"$DATA/baseline.median\").read()):.2f}x the baseline start')"
fi
rm -f "$DATA"/*.median

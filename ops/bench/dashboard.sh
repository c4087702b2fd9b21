#!/usr/bin/env bash
# Dashboard speed benchmark: first full render and filter
# changes, measured in headless Chromium with the page's own Performance API marks, against a
# daemon serving 90 days of data with 10,000 refs.
#
# Usage: ops/bench/dashboard.sh [--keep DIR] [--events N] [--runs R]
#   --keep DIR  a data directory to reuse (for example the one ops/bench/stats.sh --keep made);
#               generated when empty (default 2,000,000 events over 90 days, 10,000 refs).
set -euo pipefail
cd "$(dirname "$0")/../.."

KEEP=""; EVENTS=2000000; RUNS=10
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP="$2"; shift 2 ;;
    --events) EVENTS="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_prepare dashboard test
PORT=18094

if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  echo "== generating $EVENTS events over 90 days, 10,000 refs, 100 campaigns ($DATA)"
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days 90 --refs 10000 --campaigns 100 --log-level warning
fi
bench_serve $PORT
# Let a first rollup pass catch up before measuring.
curl -s -X POST -H "Authorization: Bearer $READ_KEY" "http://127.0.0.1:$PORT/v1/admin/rollup" >/dev/null
echo "== data: $(bench_stored_events "$DATA/linkpulse.sqlite") events"
python3 ops/bench/dashboard.py $PORT "$READ_KEY" "$RUNS"

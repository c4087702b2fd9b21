#!/usr/bin/env bash
# Dashboard speed benchmark (issue "The marketer dashboard"): first full render and filter
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

ops/install-deps.sh test
swift build -c release --product linkpulse >/dev/null
BIN=.build/release/linkpulse
DATA=${KEEP:-$(mktemp -d /tmp/linkpulse-dashboard-bench.XXXXXX)}
PORT=18094
LP_PID=""
cleanup() {
  [ -n "$LP_PID" ] && kill "$LP_PID" 2>/dev/null && wait "$LP_PID" 2>/dev/null || true
  [ -z "$KEEP" ] && rm -rf "$DATA"
  return 0
}
trap cleanup EXIT

if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  echo "== generating $EVENTS events over 90 days, 10,000 refs, 100 campaigns ($DATA)"
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days 90 --refs 10000 --campaigns 100 --log-level warning
fi
$BIN serve --data-dir "$DATA" --port $PORT --log-level warning &
LP_PID=$!
for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done
# Let a first rollup pass catch up before measuring.
READ_KEY=$(python3 -c "import json;print(json.load(open('$DATA/secrets.json'))['read_key'])")
curl -s -X POST -H "Authorization: Bearer $READ_KEY" "http://127.0.0.1:$PORT/v1/admin/rollup" >/dev/null
echo "== data: $(sqlite3 "$DATA/linkpulse.sqlite" "SELECT count(*) FROM events") events"
python3 ops/bench/dashboard.py $PORT "$READ_KEY" "$RUNS"

#!/usr/bin/env bash
# Access-key propagation: how long a key made or revoked with `linkpulse keys` beside a running
# daemon takes to be accepted or refused by it, while the daemon ingests under a steady load
# sent with another stored key; and that load's rate beside the same load before the rounds.
#
# Usage: ops/bench/keys.sh [--rounds N] [--connections C]
#   defaults: 10 rounds (a key created, then revoked, each), 16 connections of 100-event batches.
#
# Prints each round's times (from the command's exit to the daemon's first answer that shows
# the change), their median and maximum against the 2 s promise, and the share of that promise
# the refresh interval (1 s, the same run's baseline: the wait a timer tick alone explains)
# takes; then the load's events a second with and without the rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=10; CONNECTIONS=16; KEEP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_need_wrk
bench_prepare keys
PORT=18096
WORK=$(mktemp -d /tmp/linkpulse-keys-work.XXXXXX)
EXTRA_CLEANUP+=("$WORK")
now_ms() { date +%s%3N; }
status_of() {  # KEY: the status GET /v1/key answers for it
  curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "http://127.0.0.1:$PORT/v1/key"
}
wait_for() {  # KEY STATUS: waits until the daemon answers STATUS for KEY (every 10 ms)
  while [ "$(status_of "$1")" != "$2" ]; do sleep 0.01; done
}

bench_serve $PORT
LOAD_KEY=$($BIN keys create --kind ingest --name "bench load" --data-dir "$DATA" --log-level warning | tail -1)
wait_for "$LOAD_KEY" 200
load() {  # SECONDS OUTPUT
  BATCH=100 KEY=$LOAD_KEY wrk -t2 -c"$CONNECTIONS" -d"$1s" --timeout 10s -s ops/bench/events.lua "http://127.0.0.1:$PORT/v1/events" > "$2" 2>&1
}
rate() { awk '/^RESULT/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "rps") printf "%.0f", kv[2] * 100 } }' "$1"; }

echo "== load alone (10 s)"
load 10 "$WORK/alone.out"
echo "   $(rate "$WORK/alone.out") events/s"

echo "== $ROUNDS rounds of keys create / keys revoke under the same load"
SECONDS_OF_LOAD=$(( ROUNDS * 4 + 20 ))
load "$SECONDS_OF_LOAD" "$WORK/rounds.out" &
LOAD_PID=$!
sleep 2
: > "$WORK/accept_ms"; : > "$WORK/refuse_ms"
for round in $(seq "$ROUNDS"); do
  created=$($BIN keys create --kind read --name "round $round" --data-dir "$DATA" --log-level warning)
  t=$(now_ms); key=$(echo "$created" | tail -1); id=$(echo "$created" | head -1 | cut -f1)
  wait_for "$key" 200
  accept=$(( $(now_ms) - t ))
  $BIN keys revoke "$id" --data-dir "$DATA" --log-level warning > /dev/null
  t=$(now_ms)
  wait_for "$key" 401
  refuse=$(( $(now_ms) - t ))
  echo "$accept" >> "$WORK/accept_ms"; echo "$refuse" >> "$WORK/refuse_ms"
  echo "   round $round: accepted after $accept ms, refused after $refuse ms"
done
wait "$LOAD_PID" || true

python3 - "$WORK/accept_ms" "$WORK/refuse_ms" <<'PY'
import statistics, sys
for name, path in (("accepted", sys.argv[1]), ("refused", sys.argv[2])):
    values = [int(line) for line in open(path) if line.strip()]
    print(f"   {name}: median {statistics.median(values):.0f} ms, max {max(values)} ms over {len(values)} rounds; "
          f"max / 2 s promise = {max(values) / 2000:.2f}; refresh interval / promise = 0.50")
PY
echo "   load during the rounds: $(rate "$WORK/rounds.out") events/s (alone: $(rate "$WORK/alone.out"))"

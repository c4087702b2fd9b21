#!/usr/bin/env bash
# Backup and restore: `linkpulse backup` of a large installation while
# the daemon ingests, then `linkpulse restore` and the restored daemon's first start, until
# its rebuilt attribution and rollups count every restored event.
#
# Usage: ops/bench/backup.sh [--events N] [--keep DIR] [--duration SECONDS]
#   defaults: 2,000,000 generated events (90 days, 10,000 refs, 100 campaigns) in a new
#   directory; --keep reuses (and keeps) a directory that already has an installation.
#
# Prints: the backup's time, size and events, beside the same run's baseline (a plain `cp` of
# the events database, which is neither consistent under writes nor checked); the ingest rate
# of a steady batched load before and during the backup; the restore's time; and how long the
# restored daemon took to answer and to count every event again.
set -euo pipefail
cd "$(dirname "$0")/../.."

EVENTS=2000000; KEEP=""; DURATION=20
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_need_wrk
bench_prepare backup
PORT=18095
WORK=$(mktemp -d /tmp/linkpulse-backup-work.XXXXXX)
EXTRA_CLEANUP+=("$WORK")
now() { python3 -c 'import time; print(time.time())'; }
since() { python3 -c "import time; print(f'{time.time() - $1:.1f}')"; }

if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  echo "generating $EVENTS events into $DATA"
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days 90 --refs 10000 --campaigns 100 >/dev/null
fi
bench_serve $PORT --rollup-interval 10s
STORED=$(bench_stored_events "$DATA/linkpulse.sqlite")
echo "== installation: $STORED events, events database $(du -m "$DATA/linkpulse.sqlite" | cut -f1) MB"

# A steady batched load (8 connections, 100-event batches), before and during the backup.
load() {  # seconds output
  BATCH=100 KEY=$INGEST_KEY wrk -t1 -c8 -d"$1s" --timeout 10s -s ops/bench/events.lua "http://127.0.0.1:$PORT/v1/events" > "$2" 2>&1
}
load 10 "$WORK/before.out"

T=$(now); cp "$DATA/linkpulse.sqlite" "$WORK/plain-copy.sqlite"; CP_S=$(since "$T"); rm -f "$WORK/plain-copy.sqlite"

load "$DURATION" "$WORK/during.out" &
LOAD_PID=$!
sleep 2
T=$(now)
$BIN backup --data-dir "$DATA" --out "$WORK/linkpulse.backup" | tee "$WORK/backup.out"
BACKUP_S=$(since "$T")
wait $LOAD_PID || true
kill "$LP_PID"; wait "$LP_PID" 2>/dev/null || true; LP_PID=""

echo "   backup: $BACKUP_S s, $(du -m "$WORK/linkpulse.backup" | cut -f1) MB (baseline: a plain cp of the events database, $CP_S s: $(python3 -c "print(f'{$BACKUP_S / max($CP_S, 0.01):.1f}')")x)"
echo "   batched ingest beside it: $(bench_batched_rate "$WORK/before.out") events/s before, $(bench_batched_rate "$WORK/during.out") events/s during the backup"

T=$(now)
$BIN restore "$WORK/linkpulse.backup" --data-dir "$WORK/restored" > /dev/null
echo "   restore: $(since "$T") s"
T=$(now)
$BIN serve --data-dir "$WORK/restored" --port $PORT --log-level warning --rollup-interval 10s --read-key "$READ_KEY" &
LP_PID=$!
for _ in $(seq 6000); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
echo "   restored daemon answering after $(since "$T") s (the id index rebuilt)"
RK=$READ_KEY
while true; do
  STATUS=$(curl -sf "http://127.0.0.1:$PORT/v1/admin/rollup" -H "Authorization: Bearer $RK" || echo '{}')
  python3 -c "import json,sys; s=json.loads(sys.argv[1] or '{}'); sys.exit(0 if s.get('backlog_events') == 0 and s.get('stored_through_seq', 0) > 0 else 1)" "$STATUS" && break
  sleep 1
done
echo "   every restored event attributed and counted $(since "$T") s after the start: $STATUS"

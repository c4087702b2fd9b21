#!/usr/bin/env bash
# Raw-event export benchmark (issue "CSV exports"), with a same-run baseline.
#
# Usage: ops/bench/export.sh [--events N] [--keep DIR]
#   defaults: 1,000,000 events over 30 days.
#   --keep DIR  generate into DIR once and reuse it on later runs.
#
# Prints, for `linkpulse export --events` over the whole range and over a quarter of it: rows,
# seconds, rows/s and peak RSS (flat memory: the RSS must not grow with the row count); the same
# over HTTP (`GET /v1/events.csv`, plain and gzip); and the baseline: the sqlite3 shell writing
# the same events table as CSV (`sqlite3 -csv … SELECT * FROM events`), timed in the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."

EVENTS=1000000; DAYS=30; KEEP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_prepare export
OUT=$(mktemp -d /tmp/linkpulse-export-out.XXXXXX)
EXTRA_CLEANUP=("$OUT")
PORT=18093

echo "== data: $EVENTS events over $DAYS days ($DATA)"
if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days "$DAYS" --refs 10000 --campaigns 100 --log-level warning
fi
$BIN rollup --data-dir "$DATA" --log-level warning >/dev/null
STORED=$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT count(*) FROM event_rows")
FIRST=$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT date(min(occurred_at_ms) / 1000, 'unixepoch') FROM event_rows")
LAST=$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT date(max(occurred_at_ms) / 1000, 'unixepoch') FROM event_rows")
QUARTER=$(python3 -c "import datetime; a=datetime.date.fromisoformat('$FIRST'); b=datetime.date.fromisoformat('$LAST'); print(a + (b - a) / 4)")
echo "   $STORED events from $FIRST to $LAST (UTC)"

# run LABEL COMMAND…: wall time and peak RSS of one command; prints "seconds rss_mb".
measure() {
  /usr/bin/time -f "%e %M" -o "$OUT/time" "$@" >/dev/null 2>"$OUT/stderr" || { cat "$OUT/stderr" >&2; exit 1; }
  awk '{printf "%s %.0f\n", $1, $2/1024}' "$OUT/time"
}

echo "== linkpulse export --events (command line, file written atomically)"
for range in "$FIRST $LAST" "$FIRST $QUARTER"; do
  set -- $range
  read -r secs rss < <(measure $BIN export --data-dir "$DATA" --events --from "$1" --to "$2" --tz UTC --no-rollup --out "$OUT/events.csv" --log-level warning)
  rows=$(($(wc -l < "$OUT/events.csv") - 1))
  python3 -c "print(f'   {\"$1\"} … {\"$2\"}: {$rows:>9,} rows in {$secs:6.2f} s = {$rows/$secs:>9,.0f} rows/s, peak RSS {$rss} MB')"
done
read -r secs rss < <(measure $BIN export --data-dir "$DATA" --events --from "$FIRST" --to "$LAST" --tz UTC --no-rollup --gzip --out "$OUT/events.csv.gz" --log-level warning)
python3 -c "print(f'   gzip, whole range: {$STORED:>9,} rows in {$secs:6.2f} s = {$STORED/$secs:>9,.0f} rows/s, peak RSS {$rss} MB, {$(stat -c %s "$OUT/events.csv.gz")/1e6:.0f} MB')"
EXPORT_SECS=$(measure $BIN export --data-dir "$DATA" --events --from "$FIRST" --to "$LAST" --tz UTC --no-rollup --out "$OUT/events.csv" --log-level warning | cut -d' ' -f1)

echo "== baseline: the sqlite3 shell writing the events table as CSV"
read -r base_secs base_rss < <(measure sqlite3 -csv -header "$DATA/linkpulse.sqlite" "SELECT * FROM events")
python3 - <<PY
rows = $STORED
print(f"   sqlite3 -csv SELECT * FROM events: {rows:,} rows in {$base_secs:.2f} s = {rows/$base_secs:,.0f} rows/s, peak RSS {$base_rss} MB")
print(f"   ratio linkpulse export / sqlite3 shell: {(rows/$EXPORT_SECS) / (rows/$base_secs):.2f}")
PY

echo "== GET /v1/events.csv (loopback, one client)"
bench_serve $PORT
for encoding in identity gzip; do
  result=$(curl -s -o /dev/null -H "Authorization: Bearer $READ_KEY" -H "Accept-Encoding: $encoding" \
    -w "%{time_total} %{size_download}" "http://127.0.0.1:$PORT/v1/events.csv?from=$FIRST&to=$LAST&tz=UTC")
  set -- $result
  python3 -c "print(f'   {\"$encoding\":8s}: {$STORED:,} rows in {$1:.2f} s = {$STORED/$1:,.0f} rows/s, {$2/1e6:.0f} MB sent')"
done
echo "   daemon peak RSS after both: $(grep VmHWM /proc/$LP_PID/status | awk '{printf "%.0f MB", $2/1024}')"

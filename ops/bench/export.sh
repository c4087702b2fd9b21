#!/usr/bin/env bash
# Raw-event export benchmark, with a same-run baseline.
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
  # Not sealed at first (--seal-after-days 0), so that the sqlite3 shell's baseline reads every
  # event; the export of sealed events is timed last.
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days "$DAYS" --refs 10000 --campaigns 100 --seal-after-days 0 --log-level warning
fi
$BIN rollup --data-dir "$DATA" --log-level warning >/dev/null
STORED=$(bench_stored_events "$DATA/linkpulse.sqlite")
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

# The events view needs linkpulse's event_archive table, which the shell has not: it writes the
# stored rows (ids as bytes, texts as dictionary numbers), less work than decoding them.
echo "== baseline: the sqlite3 shell writing the stored rows (event_rows) as CSV"
read -r base_secs base_rss < <(measure sqlite3 -csv -header "$DATA/linkpulse.sqlite" "SELECT * FROM event_rows")
python3 - <<PY
rows = $STORED
print(f"   sqlite3 -csv SELECT * FROM event_rows: {rows:,} rows in {$base_secs:.2f} s = {rows/$base_secs:,.0f} rows/s, peak RSS {$base_rss} MB")
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

echo "== linkpulse export --events of sealed events (older than two days, sealed by linkpulse rollup)"
if [ -n "$LP_PID" ]; then kill "$LP_PID"; wait "$LP_PID" 2>/dev/null || true; LP_PID=""; fi
$BIN rollup --data-dir "$DATA" --log-level warning >/dev/null
SEALED=$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT coalesce(sum(row_count), 0) FROM event_blocks")
read -r secs rss < <(measure $BIN export --data-dir "$DATA" --events --from "$FIRST" --to "$LAST" --tz UTC --no-rollup --out "$OUT/events-sealed.csv" --log-level warning)
python3 -c "print(f'   {$SEALED:,} of {$STORED:,} events sealed; whole range: {$STORED:,} rows in {$secs:.2f} s = {$STORED/$secs:,.0f} rows/s, peak RSS {$rss} MB')"
cmp -s "$OUT/events.csv" "$OUT/events-sealed.csv" && echo "   the same bytes as before sealing" || echo "   DIFFERENT from the export before sealing"

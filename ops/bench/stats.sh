#!/usr/bin/env bash
# Rollup and stats benchmark, with same-run baselines.
#
# Usage: ops/bench/stats.sh [--events N] [--days D] [--refs R] [--campaigns C] [--requests K] [--keep DIR] [--skip-rollup] [--rebuilds N]
#   defaults: 10,000,000 events over 90 days, 10,000 refs, 100 campaigns, 100 requests a query.
#   --keep DIR     generate into DIR once and reuse it on later runs (generation takes minutes).
#   --skip-rollup  with --keep: reuse its rollups too, measure only the queries.
#   --rebuilds N   how many times the rebuild is timed (default 3; the median is reported).
#
# Prints: generation rate; rollup throughput (a full `linkpulse rollup --rebuild`) against a
# plain SQLite GROUP BY over the newest million raw rows; database sizes per million events;
# p50/p99 of summary, breakdown by ref and daily timeseries over the whole range in UTC,
# Asia/Kolkata and Asia/Kathmandu, of the same three filtered to one campaign, of a
# breakdown by country over the last 7 days and the whole range, and of questions by country
# in Asia/Kolkata over the last 7 days; and the same answers
# computed from the raw table with GROUP BY, timed once each.
set -euo pipefail
cd "$(dirname "$0")/../.."

EVENTS=10000000; DAYS=90; REFS=10000; CAMPAIGNS=100; REQUESTS=100; KEEP=""; SKIP_ROLLUP=0; REBUILDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS="$2"; shift 2 ;;
    --days) DAYS="$2"; shift 2 ;;
    --refs) REFS="$2"; shift 2 ;;
    --campaigns) CAMPAIGNS="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --skip-rollup) SKIP_ROLLUP=1; shift ;;
    --rebuilds) REBUILDS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_prepare stats
PORT=18092
seconds() { python3 -c 'import time; print(time.time())'; }

echo "== data: $EVENTS events over $DAYS days, $REFS refs, $CAMPAIGNS campaigns ($DATA)"
if [ ! -f "$DATA/linkpulse.sqlite" ]; then
  start=$(seconds)
  $BIN generate --data-dir "$DATA" --events "$EVENTS" --days "$DAYS" --refs "$REFS" --campaigns "$CAMPAIGNS" --no-rollup --log-level warning
  end=$(seconds)
  python3 -c "print(f'   generated and stored through the ingest code: {$EVENTS/($end-$start):,.0f} events/s ({$end-$start:.0f} s)')"
fi
# Stored events: those still in event_rows and those sealed into blocks.
$BIN migrate --data-dir "$DATA" --log-level warning >/dev/null   # a kept directory of an older build
STORED=$(bench_stored_events "$DATA/linkpulse.sqlite")
SEALED=$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT coalesce(sum(row_count), 0) FROM event_blocks")

if [ "$SKIP_ROLLUP" = 0 ] || [ -z "$KEEP" ]; then
echo "== attribution and rollup throughput"
# The recounts are timed on events as ingest stores them (--seal-after-days 0: nothing is sealed
# until "sealing" below); a recount of sealed events is timed after that.
$BIN rollup --seal-after-days 0 --data-dir "$DATA" --log-level warning >/dev/null   # whatever generate left
start=$(seconds)
$BIN rollup --reattribute --seal-after-days 0 --data-dir "$DATA" --log-level warning >/dev/null
attributed=$(seconds)
python3 -c "print(f'   attribution replay + rollup (linkpulse rollup --reattribute): {$STORED/($attributed-$start):,.0f} events/s ({$attributed-$start:.1f} s)')"
# The machine's speed drifts by a tenth and more between runs: the rebuild runs REBUILDS times,
# each printed, and the median is what is compared.
times=()
for _ in $(seq "$REBUILDS"); do
  start=$(seconds)
  $BIN rollup --rebuild --seal-after-days 0 --data-dir "$DATA" --log-level warning >/dev/null
  end=$(seconds)
  times+=("$(python3 -c "print($end - $start)")")
done
base_start=$(seconds)
# The raw rows as stored (codes, visitor bytes): the same grouping the rollups do.
sqlite3 "$DATA/linkpulse.sqlite" "SELECT ref, campaign, platform, type, bot, count(*), count(DISTINCT coalesce(visitor, device_id)) FROM event_rows WHERE seq > (SELECT max(seq) - 1000000 FROM event_rows) GROUP BY 1, 2, 3, 4, 5" >/dev/null
base_end=$(seconds)
python3 - <<PY
import statistics
times = [$(IFS=,; echo "${times[*]}")]
median = statistics.median(times)
rollup = $STORED / median
baseline = 1_000_000 / ($base_end - $base_start)
print("   linkpulse rollup --rebuild, each run (whole command): " + ", ".join(f"{t:.1f} s" for t in times))
print(f"   linkpulse rollup --rebuild: {$STORED:,} events in {median:.1f} s (median of {len(times)}) = {rollup:,.0f} events/s (target 500,000)")
print(f"   baseline, GROUP BY over the newest 1,000,000 raw rows: {$base_end - $base_start:.2f} s = {baseline:,.0f} rows/s")
print(f"   ratio rollup / plain GROUP BY: {rollup / baseline:.2f}")
PY
fi

echo "== sealing: events older than two days into compressed blocks (linkpulse rollup, as the daemon's seal job does)"
start=$(seconds)
$BIN rollup --data-dir "$DATA" --log-level warning >/dev/null
end=$(seconds)
NOW_SEALED=$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT coalesce(sum(row_count), 0) FROM event_blocks")
python3 -c "print(f'   {$NOW_SEALED - $SEALED:,} events sealed in {$end-$start:.1f} s; {$NOW_SEALED:,} of {$STORED:,} are sealed')"
if [ "$SKIP_ROLLUP" = 0 ] || [ -z "$KEEP" ]; then
  start=$(seconds)
  $BIN rollup --rebuild --seal-after-days 0 --data-dir "$DATA" --log-level warning >/dev/null
  end=$(seconds)
  python3 -c "print(f'   linkpulse rollup --rebuild of the sealed events: {$STORED/($end-$start):,.0f} events/s ({$end-$start:.1f} s, whole command)')"
fi

echo "== database size (every file, WAL included, as left by generate, rollup and sealing)"
total=0
for f in linkpulse.sqlite linkpulse-ids.sqlite linkpulse-attribution.sqlite linkpulse-rollups.sqlite; do
  for suffix in "" -wal; do
    [ -f "$DATA/$f$suffix" ] || continue
    size=$(stat -c %s "$DATA/$f$suffix")
    total=$((total + size))
    python3 -c "print(f'   {\"$f$suffix\":36s} {$size/1e6:8.0f} MB = {$size/$STORED:6.0f} bytes per event')"
  done
done
python3 -c "print(f'   all files: {$total/1e6:.0f} MB = {$total/$STORED:.0f} bytes per event (target 150)')"
for f in linkpulse.sqlite linkpulse-attribution.sqlite linkpulse-rollups.sqlite; do
  sqlite3 "$DATA/$f" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
done

echo "== stats latency ($REQUESTS requests each, one connection)"
bench_serve $PORT
# The whole generated range, as local dates.
FROM=$(python3 -c "import datetime; print((datetime.datetime.utcnow() - datetime.timedelta(days=$DAYS - 1)).date())")
TO=$(python3 -c "import datetime; print(datetime.datetime.utcnow().date())")
paths=()
for tz in UTC Asia%2FKolkata Asia%2FKathmandu; do
  paths+=("/v1/stats/summary?from=$FROM&to=$TO&tz=$tz"
          "/v1/stats/breakdown?by=ref&limit=50&from=$FROM&to=$TO&tz=$tz"
          "/v1/stats/timeseries?interval=day&from=$FROM&to=$TO&tz=$tz")
done
# A drill into one campaign (what the dashboard asks when a campaign is clicked): filtered
# reads of the cubes instead of the unfiltered rows by platform.
for tz in UTC Asia%2FKolkata; do
  paths+=("/v1/stats/summary?campaign=campaign_1&from=$FROM&to=$TO&tz=$tz"
          "/v1/stats/breakdown?by=ref&limit=50&campaign=campaign_1&from=$FROM&to=$TO&tz=$tz"
          "/v1/stats/timeseries?interval=day&campaign=campaign_1&from=$FROM&to=$TO&tz=$tz")
done
# By country (the dashboard's countries panel: the last 7 days; and the whole range), in UTC;
# and the last 7 days in Asia/Kolkata (its local days are not UTC days: on SQLite the part
# of each local day in a UTC day partly asked is read from the raw events), with the daily
# series filtered to one country.
WEEK=$(python3 -c "import datetime; print((datetime.datetime.utcnow() - datetime.timedelta(days=6)).date())")
paths+=("/v1/stats/breakdown?by=country&limit=20&from=$WEEK&to=$TO&tz=UTC"
        "/v1/stats/breakdown?by=country&limit=50&from=$FROM&to=$TO&tz=UTC"
        "/v1/stats/breakdown?by=country&limit=20&from=$WEEK&to=$TO&tz=Asia%2FKolkata"
        "/v1/stats/timeseries?interval=day&country=US&from=$WEEK&to=$TO&tz=Asia%2FKolkata")
python3 ops/bench/stats_load.py $PORT "$READ_KEY" "$REQUESTS" "${paths[@]}"
echo "   peak RSS of the daemon: $(grep VmHWM /proc/$LP_PID/status | awk '{print $2/1024 " MB"}')"

echo "== baseline: the same answers from the raw table (GROUP BY, once each, UTC)"
if [ "$(sqlite3 "$DATA/linkpulse.sqlite" "SELECT count(*) FROM event_blocks")" != 0 ]; then
  echo "   (over event_rows only: the sqlite3 shell cannot read sealed blocks, so these read the $(sqlite3 "$DATA/linkpulse.sqlite" "SELECT count(*) FROM event_rows") events not sealed)"
fi
FROM_MS=$(python3 -c "import datetime; print(int(datetime.datetime.fromisoformat('$FROM').replace(tzinfo=datetime.timezone.utc).timestamp()*1000))")
TO_MS=$(python3 -c "import datetime; print(int((datetime.datetime.fromisoformat('$TO').replace(tzinfo=datetime.timezone.utc) + datetime.timedelta(days=1)).timestamp()*1000))")
for sql in \
  "SELECT type, bot, count(*), count(DISTINCT coalesce(visitor, device_id)) FROM event_rows WHERE occurred_at_ms >= $FROM_MS AND occurred_at_ms < $TO_MS GROUP BY type, bot" \
  "SELECT ref, type, count(*) FROM event_rows WHERE bot = 0 AND occurred_at_ms >= $FROM_MS AND occurred_at_ms < $TO_MS GROUP BY ref, type ORDER BY 3 DESC LIMIT 50" \
  "SELECT occurred_at_ms / 86400000, type, count(*), count(DISTINCT coalesce(visitor, device_id)) FROM event_rows WHERE occurred_at_ms >= $FROM_MS AND occurred_at_ms < $TO_MS GROUP BY 1, 2"; do
  start=$(seconds)
  sqlite3 "$DATA/linkpulse.sqlite" "$sql" >/dev/null
  end=$(seconds)
  python3 -c "print(f'   {($end-$start)*1000:8.0f} ms  ' + '''${sql:0:60}''' + '…')"
done

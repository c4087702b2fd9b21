#!/usr/bin/env bash
# Freshness soak: batched ingest at the daemon's maximum for a
# while, sampling every second how far the stats are behind, then until they have caught up.
#
# Usage: ops/bench/soak.sh [--duration SECONDS] [--interval DURATION] [--batch N] [--connections N]
#                         [--idle SECONDS] [--baseline BIN] [--serve-args "ARGS"] [--baseline-args "ARGS"]
#   defaults: 600 s of 100-event POSTs on 64 connections, --rollup-interval 10s, then 30 s
#   with nothing sent once everything is counted (--idle), after which the WALs are measured.
#   --baseline BIN: afterwards, the same soak against another linkpulse binary (e.g. a release
#   build of an earlier commit) on a data directory of its own, printed beside this build's.
#   --serve-args / --baseline-args: more `serve` flags for this build's / the baseline's daemon;
#   --baseline-args without --baseline runs the baseline with this build (e.g. the same binary
#   with --ingest-pacing off).
#
# Prints: the ingest rate; lag (how long the oldest event not yet counted had waited, from
# GET /v1/admin/rollup, the same figure as linkpulse_rollup_lag_seconds) p50/p99/max during the
# load and its trend (least-squares slope over the load, s per minute); the backlog (events
# stored, not yet counted); how long after the load stopped every stored event was counted;
# the daemon's peak RSS; the largest WAL file's peak size; every WAL's size in all during the load
# (target: 64 MiB) and after the quiet
# spell (target: 4 MiB in all); and the targets (lag p99 <= 2 x interval, no upward trend, caught up
# <= 1 interval after the load). Samples are kept in this/soak.csv (and baseline/soak.csv) in the
# work directory with --keep.
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=600; INTERVAL=10s; BATCH=100; CONNECTIONS=64; IDLE=30; KEEP=""; BASELINE=""; SERVE_ARGS=""; BASELINE_ARGS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --interval) INTERVAL="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    --idle) IDLE="$2"; shift 2 ;;
    --keep) KEEP="$2"; shift 2 ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    --serve-args) SERVE_ARGS="$2"; shift 2 ;;
    --baseline-args) BASELINE_ARGS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

. ops/bench/lib.sh
bench_need_wrk
bench_prepare soak
PORT=18093
INGEST_KEY=lpi_soak_bench_key
READ_KEY=lpr_soak_bench_key

# soak BIN LABEL DIR [ARGS]: one soak of the daemon BIN on a new data directory DIR.
soak() {
local BIN=$1 LABEL=$2 DATA=$3 EXTRA=${4:-}
mkdir -p "$DATA"
# shellcheck disable=SC2086 # EXTRA is a list of flags
$BIN serve --data-dir "$DATA" --port $PORT --ingest-key $INGEST_KEY --read-key $READ_KEY \
  --rollup-interval "$INTERVAL" --log-level warning $EXTRA > "$DATA/serve.log" 2>&1 &
LP_PID=$!
for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done

SAMPLES="$DATA/soak.csv"
echo "t,phase,lag_seconds,backlog_events,stored,counted,rss_kb,attribution_backlog,wal_bytes,wal_events,wal_ids,wal_attribution,wal_rollups" > "$SAMPLES"
sample() {  # phase t0
  local status rss wal
  status=$(curl -sf "http://127.0.0.1:$PORT/v1/admin/rollup" -H "Authorization: Bearer $READ_KEY" || echo '{}')
  rss=$(awk '/VmRSS/ {print $2}' /proc/$LP_PID/status 2>/dev/null || echo 0)
  # The largest of the four WAL files right now.
  wal=$(stat -c %s "$DATA"/*.sqlite-wal 2>/dev/null | sort -n | tail -1)
  local each=""
  for f in linkpulse linkpulse-ids linkpulse-attribution linkpulse-rollups; do
    each="$each,$(stat -c %s "$DATA/$f.sqlite-wal" 2>/dev/null || echo 0)"
  done
  python3 -c "
import json, sys, time
s = json.loads(sys.argv[1] or '{}')
print(f\"{time.time() - float(sys.argv[3]):.1f},{sys.argv[2]},{s.get('lag_seconds', '')},{s.get('backlog_events', '')},{s.get('stored_through_seq', '')},{s.get('counted_through_seq', '')},{sys.argv[4]},{s.get('attribution_backlog_events', '')},{sys.argv[5]}{sys.argv[6]}\")
" "$status" "$1" "$2" "$rss" "${wal:-0}" "$each" >> "$SAMPLES"
}

echo "== $LABEL${EXTRA:+ ($EXTRA)}: $DURATION s of $BATCH-event POSTs on $CONNECTIONS connections, rollup interval $INTERVAL"
T0=$(python3 -c 'import time; print(time.time())')
THREADS=2; [ "$CONNECTIONS" -lt 2 ] && THREADS=1
BATCH=$BATCH KEY=$INGEST_KEY timeout $((DURATION + 30)) wrk -t$THREADS -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s \
  -s ops/bench/events.lua "http://127.0.0.1:$PORT/v1/events" > "$DATA/wrk.out" &
WRK_PID=$!
while kill -0 $WRK_PID 2>/dev/null; do sample load "$T0"; sleep 1; done
wait $WRK_PID || true
# After the load: until every stored event is counted (at most 20 intervals).
INTERVAL_S=$(python3 -c "
t = '$INTERVAL'
for suffix, scale in (('ms', 0.001), ('s', 1), ('m', 60), ('h', 3600)):
    if t.endswith(suffix) and t[:-len(suffix)].isdigit():
        print(int(t[:-len(suffix)]) * scale); break
else:
    print(float(t))")
END=$(python3 -c "import time; print(time.time() + 20 * $INTERVAL_S)")
while python3 -c "import time, sys; sys.exit(0 if time.time() < $END else 1)"; do
  sample after "$T0"
  tail -1 "$SAMPLES" | awk -F, '{ exit ($4 == "0" ? 0 : 1) }' && break
  sleep 1
done
# Then quiet: nothing sent for IDLE seconds, the WALs sampled each second.
IDLE_END=$(python3 -c "import time; print(time.time() + $IDLE)")
while python3 -c "import time, sys; sys.exit(0 if time.time() < $IDLE_END else 1)"; do
  sample idle "$T0"
  sleep 1
done

python3 - "$SAMPLES" "$DATA/wrk.out" "$INTERVAL_S" "$DURATION" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
interval, duration = float(sys.argv[3]), float(sys.argv[4])
result = [l for l in open(sys.argv[2]) if l.startswith("RESULT")]
fields = dict(p.split("=", 1) for p in result[0].split()[1:]) if result else {}
load = [r for r in rows if r["phase"] == "load" and r["lag_seconds"] != ""]
after = [r for r in rows if r["phase"] == "after" and r["lag_seconds"] != ""]
def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")
lags = [float(r["lag_seconds"]) for r in load]
backlog = [int(r["backlog_events"]) for r in load]
stored = int(load[-1]["stored"]) if load else 0
print(f"   ingest: {stored:,} events stored in {duration:.0f} s = {stored / duration:,.0f} events/s "
      f"(wrk: {float(fields.get('rps', 0)):,.0f} requests/s, p99 {fields.get('p99_ms', '?')} ms, "
      f"errors {int(fields.get('errors', 0)) + int(fields.get('non2xx', 0))})")
if lags:
    n = len(lags); ts = [float(r["t"]) for r in load]
    mt, ml = sum(ts) / n, sum(lags) / n
    slope = sum((t - mt) * (l - ml) for t, l in zip(ts, lags)) / max(sum((t - mt) ** 2 for t in ts), 1e-9)
    print(f"   lag during the load: p50 {pct(lags, 50):.1f} s, p99 {pct(lags, 99):.1f} s, max {max(lags):.1f} s "
          f"(target p99 <= {2 * interval:.0f} s); trend {slope * 60:+.2f} s per minute (target: none upward)")
    print(f"   backlog during the load: p50 {pct(backlog, 50):,} events, max {max(backlog):,}")
    waiting = [int(r["attribution_backlog"] or 0) for r in load]
    print(f"   of it not yet attributed: p50 {pct(waiting, 50):,} events, max {max(waiting):,}")
attributed = next((r for r in after if (r["attribution_backlog"] or "1") == "0"), None)
if attributed:
    print(f"   attribution caught up {float(attributed['t']) - duration:.1f} s after the load stopped")
caught = next((r for r in after if int(r["backlog_events"]) == 0), None)
if caught:
    print(f"   caught up {float(caught['t']) - duration:.1f} s after the load stopped (target <= {interval:.0f} s)")
elif after:
    print(f"   NOT caught up {float(after[-1]['t']) - duration:.0f} s after the load: {int(after[-1]['backlog_events']):,} events left")
rss = [int(r["rss_kb"] or 0) for r in rows]
print(f"   peak RSS of the daemon: {max(rss) / 1024:.0f} MB")
wal = [int(r["wal_bytes"] or 0) for r in rows]
during = [int(r["wal_bytes"] or 0) for r in rows if r["phase"] == "load"] or [0]
print(f"   largest WAL file: peak {max(wal) / 2**20:.1f} MiB (during the load {max(during) / 2**20:.1f} MiB, "
      f"p50 {pct(during, 50) / 2**20:.1f} MiB), at the end {wal[-1] / 2**20:.1f} MiB (target <= 64 MiB)")
names = ("events", "ids", "attribution", "rollups")
in_all = [sum(int(r["wal_" + n] or 0) for n in names) for r in rows if r["phase"] == "load"] or [0]
print(f"   every WAL in all during the load: peak {max(in_all) / 2**20:.1f} MiB, p50 {pct(in_all, 50) / 2**20:.1f} MiB (target <= 64 MiB)")
quiet = [r for r in rows if r["phase"] == "idle"]
if quiet:
    at_rest = sum(int(quiet[-1]["wal_" + n] or 0) for n in names)
    print(f"   every WAL {float(quiet[-1]['t']) - float(after[-1]['t'] if after else duration):.0f} s after everything was counted, in all: "
          f"{at_rest / 2**20:.1f} MiB (" + ", ".join(f"{n} {int(quiet[-1]['wal_' + n] or 0) / 2**20:.1f}" for n in names) + "; target <= 4 MiB)")
print("   each WAL's peak during the load / after it: " + ", ".join(
    f"{name} {max(int(r['wal_' + name] or 0) for r in rows if r['phase'] == 'load') / 2**20:.0f}"
    f" / {max([int(r['wal_' + name] or 0) for r in rows if r['phase'] == 'after'] or [0]) / 2**20:.0f} MiB"
    for name in ("events", "ids", "attribution", "rollups")))
PY
echo "   ingest paced (commits waiting for the rollups, --ingest-pacing): $(bench_paced_seconds $PORT) s in all"
STOP_T=$(python3 -c 'import time; print(time.time())')
kill "$LP_PID" 2>/dev/null && wait "$LP_PID" 2>/dev/null || true
echo "   SIGTERM to exit: $(python3 -c "import time; print(f'{time.time() - $STOP_T:.1f}')") s"
LP_PID=""
}

soak "$BIN" "this build" "$DATA/this" "$SERVE_ARGS"
if [ -z "$BASELINE" ] && [ -n "$BASELINE_ARGS" ]; then BASELINE=$BIN; fi
if [ -n "$BASELINE" ]; then
  sleep 5
  soak "$BASELINE" "baseline $BASELINE" "$DATA/baseline" "$BASELINE_ARGS"
fi

#!/usr/bin/env bash
# Ingest on PostgreSQL: one daemon, then two daemons side by side, on one PostgreSQL,
# beside the SQLite daemon in the same run (the baseline), driven by wrk on loopback.
#
# Usage: ops/bench/postgres.sh [--duration SECONDS] [--skip-ingest] [--resolve] [--stats-events N [--requests R]]
#                               [--copy-events N --baseline BIN]
#   --skip-ingest     leaves out the ingest scenarios (batches of 100 and single events)
#   --resolve         then also: POST /v1/resolve at 1 and 64 connections (ops/bench/resolve.lua,
#                     after the 10,000 clicks it resolves against) on the SQLite daemon and on two
#                     daemons on PostgreSQL, requests split between them
#   --stats-events N  then also: generates N events (90 days, 10,000 refs, 100 campaigns) into a
#                     SQLite installation, copies it with `linkpulse copy` (timed), and measures
#                     stats latency on the SQLite daemon and on a daemon on PostgreSQL (R each)
#   --copy-events N   then also: the derived work on PostgreSQL, this build against BIN (a release
#                     build of another commit): each generates N events (30 days, 10,000 refs,
#                     seed 3), then `linkpulse copy` stores them in an empty database and
#                     attributes and counts them all; two rounds, the builds alternating. Prints
#                     each copy's time and the rows and bytes of lp_rollups.
#
# PostgreSQL is Debian's server in a throwaway cluster (initdb into a temporary directory, run as
# `nobody` when this script runs as root, synchronous_commit on, fsync on, shared_buffers 256MB).
# Every scenario starts on an empty database (or data directory). Two daemons get half the
# connections each (two wrk processes at once; their events/s are added). The SQLite daemon runs
# with its rollup timer at 1 h and pacing off, so both measure the ingest path (its attribution
# follower still runs; on PostgreSQL one daemon attributes, the others stand by). Prints events/s,
# p50/p99, errors, the CPU time per event of the daemons and of the PostgreSQL server (the
# two cores are shared by all, wrk included), and the bytes an event takes in PostgreSQL
# (tables and indexes, WAL not counted).
set -euo pipefail
cd "$(dirname "$0")/../.."
. ops/bench/lib.sh  # bench_need_wrk

DURATION=10
STATS_EVENTS=0
REQUESTS=20
RESOLVE=0
INGEST=1
COPY_EVENTS=0
BASELINE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --stats-events) STATS_EVENTS="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --resolve) RESOLVE=1; shift ;;
    --skip-ingest) INGEST=0; shift ;;
    --copy-events) COPY_EVENTS="$2"; shift 2 ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

if [ "$COPY_EVENTS" -gt 0 ] && [ ! -x "$BASELINE" ]; then echo "--copy-events needs --baseline BIN" >&2; exit 2; fi
bench_need_wrk
ops/install-deps.sh test >/dev/null
swift build -c release --product linkpulse >/dev/null
BIN=$PWD/.build/release/linkpulse
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

WORK=$(mktemp -d /tmp/linkpulse-pgbench.XXXXXX)
chmod 755 "$WORK"
PG_PORT=18095
LP_PORTS=(18096 18097)
KEY=lpi_bench_key
PIDS=()
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  as_pg "$PGBIN/pg_ctl" -D "$WORK/pg" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/pg"
[ "$(id -u)" -eq 0 ] && chown nobody:nogroup "$WORK/pg"
as_pg "$PGBIN/initdb" -D "$WORK/pg" -U linkpulse --auth=trust -E UTF8 --no-locale >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg/server.log" -w -o \
  "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $WORK/pg -c shared_buffers=256MB -c max_wal_size=4GB -c synchronous_commit=on -c max_connections=200" \
  start >/dev/null
psql_lp() { as_pg "$PGBIN/psql" -X -q -A -t -h 127.0.0.1 -p $PG_PORT -U linkpulse -d "$1" -c "$2"; }

# start_daemon PORT ARGS…: starts a daemon and waits for /healthz.
start_daemon() {
  local port=$1; shift
  LINKPULSE_LOG_LEVEL=warning "$BIN" serve --port "$port" --ingest-key $KEY --read-key lpr_bench_read_key "$@" > "$WORK/daemon-$port.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/daemon-$port.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "daemon on $port did not start" >&2; exit 1
}
stop_daemons() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  PIDS=()
}

# cpu_ticks PID…: user+system CPU time of the processes, in clock ticks.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat") ))
  done
  echo "$total"
}
# server_pids: the PostgreSQL server and its processes (backends of every daemon among them).
server_pids() {
  local main
  main=$(head -1 "$WORK/pg/postmaster.pid")
  echo "$main" $(pgrep -P "$main")
}

# load NAME BATCH CONNS PORT…: wrk against each port at once (CONNS split between them); also
# records the CPU time the daemons and the PostgreSQL server spent meanwhile. LOAD_SCRIPT and
# LOAD_PATH (default: events.lua, /v1/events) say what is sent; LOAD_TO the file its lines go to
# (default results; its CPU times go to LOAD_TO.cpu).
load() {
  local name=$1 batch=$2 conns=$3; shift 3
  local per=$(( (conns + $# - 1) / $# )) threads=$(( 2 / $# )) files=() loaders=()
  [ "$per" -lt "$threads" ] && threads=$per
  local daemons_before server_before
  daemons_before=$(cpu_ticks "${PIDS[@]}")
  server_before=$(cpu_ticks $(server_pids))
  for port in "$@"; do
    BATCH=$batch KEY=$KEY CLICKS=10000 wrk -t"$threads" -c"$per" -d"${DURATION}s" --timeout 5s -s "${LOAD_SCRIPT:-ops/bench/events.lua}" \
      "http://127.0.0.1:$port${LOAD_PATH:-/v1/events}" > "$WORK/wrk-$port.out" &
    loaders+=($!)
    files+=("$WORK/wrk-$port.out")
  done
  wait "${loaders[@]}"
  local daemons_cpu=$(( $(cpu_ticks "${PIDS[@]}") - daemons_before ))
  local server_cpu=$(( $(cpu_ticks $(server_pids)) - server_before ))
  for file in "${files[@]}"; do
    echo "$name batch=$batch conns=$conns $(grep '^RESULT' "$file")" >> "$WORK/${LOAD_TO:-results}"
  done
  echo "$name batch=$batch daemons=$daemons_cpu server=$server_cpu hz=$(getconf CLK_TCK)" >> "$WORK/${LOAD_TO:-results}.cpu"
}

run_sqlite() {
  rm -rf "$WORK/sqlite"
  start_daemon "${LP_PORTS[0]}" --data-dir "$WORK/sqlite" --durability full --rollup-interval 1h --ingest-pacing off
  load sqlite "$1" 64 "${LP_PORTS[0]}"
  stop_daemons
}

run_postgres() {  # NAME DAEMONS BATCH
  local db="bench_$1_$3"
  psql_lp postgres "CREATE DATABASE $db" >/dev/null
  local url="postgres://linkpulse@127.0.0.1:$PG_PORT/$db" ports=()
  for i in $(seq 0 $(( $2 - 1 ))); do
    start_daemon "${LP_PORTS[$i]}" --data-dir "$WORK/none-$i" --database "$url"
    ports+=("${LP_PORTS[$i]}")
  done
  load "$1" "$3" 64 "${ports[@]}"
  stop_daemons
  psql_lp "$db" "SELECT count(*), (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relkind = 'r' AND c.relname LIKE 'lp\_%') FROM lp_event_ids" \
    | tr '|' ' ' | { read -r events bytes; echo "$1 batch=$3 stored=$events bytes=$bytes" >> "$WORK/sizes"; }
}

if [ "$INGEST" -eq 1 ]; then
  for batch in 100 1; do
    run_sqlite "$batch"
    run_postgres pg1 1 "$batch"
    run_postgres pg2 2 "$batch"
  done
fi

# resolve_run NAME CONNS PORT…: resolves against the bench clicks (stored through the first port).
resolve_run() {
  local name=$1 conns=$2; shift 2
  LOAD_SCRIPT=ops/bench/resolve.lua LOAD_PATH=/v1/resolve LOAD_TO=resolves load "$name" 1 "$conns" "$@"
}
if [ "$RESOLVE" -eq 1 ]; then
  rm -rf "$WORK/sqlite-resolve"
  start_daemon "${LP_PORTS[0]}" --data-dir "$WORK/sqlite-resolve" --durability full --ingest-pacing off --resolve-rate 0
  python3 ops/bench/resolve_clicks.py "${LP_PORTS[0]}" $KEY
  sleep 2
  for conns in 1 64; do resolve_run sqlite "$conns" "${LP_PORTS[0]}"; done
  stop_daemons
  psql_lp postgres "CREATE DATABASE bench_resolve" >/dev/null
  for i in 0 1; do
    start_daemon "${LP_PORTS[$i]}" --data-dir "$WORK/none-$i" --database "postgres://linkpulse@127.0.0.1:$PG_PORT/bench_resolve" --resolve-rate 0
  done
  python3 ops/bench/resolve_clicks.py "${LP_PORTS[0]}" $KEY
  sleep 2
  for conns in 1 64; do
    # One connection goes to the second daemon started (usually not the one attributing, so each
    # answer waits for the other daemon's round); 64 are split between both.
    if [ "$conns" -eq 1 ]; then resolve_run pg2 1 "${LP_PORTS[1]}"; else resolve_run pg2 64 "${LP_PORTS[@]}"; fi
  done
  stop_daemons
fi

if [ "$STATS_EVENTS" -gt 0 ]; then
  echo "generating $STATS_EVENTS events into SQLite..." >&2
  LINKPULSE_LOG_LEVEL=warning "$BIN" generate --data-dir "$WORK/gen" --events "$STATS_EVENTS" --days 90 --refs 10000 \
    --campaigns 100 --seed 3 >/dev/null
  psql_lp postgres "CREATE DATABASE bench_stats" >/dev/null
  url="postgres://linkpulse@127.0.0.1:$PG_PORT/bench_stats"
  start=$(date +%s.%N)
  LINKPULSE_LOG_LEVEL=warning "$BIN" copy --from "$WORK/gen" --to "$url" > "$WORK/copy.out"
  copy_s=$(echo "$(date +%s.%N) - $start" | bc)
  READ_KEY=lpr_bench_read_key
  to=$(date -u -d tomorrow +%F); from=$(date -u -d "90 days ago" +%F)
  paths=("/v1/stats/summary?from=$from&to=$to&tz=UTC" "/v1/stats/breakdown?from=$from&to=$to&by=ref&limit=50&tz=UTC"
         "/v1/stats/timeseries?from=$from&to=$to&interval=day&tz=UTC" "/v1/stats/summary?from=$(date -u -d '1 day ago' +%F)&to=$to&tz=UTC")
  {
    echo; echo "Stats at $STATS_EVENTS events over 90 days ($REQUESTS requests a query, one connection)"
    echo "copy into PostgreSQL (linkpulse copy, attribution included): ${copy_s%.*} s: $(cat "$WORK/copy.out")"
    start_daemon "${LP_PORTS[0]}" --data-dir "$WORK/gen"
    echo "SQLite daemon (rollups):"
    python3 ops/bench/stats_load.py "${LP_PORTS[0]}" "$READ_KEY" "$REQUESTS" "${paths[@]}"
    stop_daemons
    start_daemon "${LP_PORTS[1]}" --data-dir "$WORK/none" --database "$url"
    echo "daemon on PostgreSQL (raw events):"
    python3 ops/bench/stats_load.py "${LP_PORTS[1]}" "$READ_KEY" "$REQUESTS" "${paths[@]}"
    stop_daemons
  } > "$WORK/stats"
fi

if [ "$COPY_EVENTS" -gt 0 ]; then
  {
    echo; echo "Derived work on PostgreSQL: linkpulse copy of $COPY_EVENTS events (copy, attribution, counting), two rounds"
    for build in this baseline; do
      bin=$BIN; [ "$build" = baseline ] && bin=$BASELINE
      LINKPULSE_LOG_LEVEL=warning "$bin" generate --data-dir "$WORK/copy-$build" --events "$COPY_EVENTS" --days 30 --refs 10000 \
        --campaigns 100 --seed 3 --no-rollup >/dev/null
    done
    for round in 1 2; do
      for build in this baseline; do
        bin=$BIN; [ "$build" = baseline ] && bin=$BASELINE
        db="copy_${build}_$round"
        psql_lp postgres "CREATE DATABASE $db" >/dev/null
        start=$(date +%s.%N)
        LINKPULSE_LOG_LEVEL=warning "$bin" copy --from "$WORK/copy-$build" --to "postgres://linkpulse@127.0.0.1:$PG_PORT/$db" >/dev/null
        took=$(echo "$(date +%s.%N) - $start" | bc)
        rows=$(psql_lp "$db" "SELECT count(*) FROM lp_rollups")
        bytes=$(psql_lp "$db" "SELECT pg_total_relation_size('lp_rollups') + coalesce((SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'lp_rollups'::regclass), 0)")
        printf '  %-8s round %s: %6.1f s (%s events/s); lp_rollups %s rows, %s MB\n' "$build" "$round" "$took" \
          "$(echo "$COPY_EVENTS / $took" | bc)" "$rows" "$(echo "$bytes / 1000000" | bc)"
      done
    done
  } > "$WORK/copy"
fi

[ -s "$WORK/results" ] && python3 - "$WORK/results" "$WORK/sizes" "$DURATION" "$WORK/results.cpu" <<'PY'
import sys
from collections import defaultdict
cpu = {}
for line in open(sys.argv[4]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:])
    hz = int(fields["hz"])
    cpu[(parts[0], int(fields["batch"]))] = (int(fields["daemons"]) / hz, int(fields["server"]) / hz)
runs = defaultdict(list)
for line in open(sys.argv[1]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    runs[(parts[0], int(fields["batch"]))].append(fields)
print(f"\nIngest on PostgreSQL against SQLite, same run ({sys.argv[3]} s a scenario, 64 connections)")
print(f"{'store':<28} {'events/req':>10} {'events/s':>10} {'vs SQLite':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'daemon µs/ev':>12} {'server µs/ev':>12}")
names = {"sqlite": "SQLite, one daemon", "pg1": "PostgreSQL, one daemon", "pg2": "PostgreSQL, two daemons"}
for batch in (100, 1):
    base = sum(float(f["rps"]) for f in runs[("sqlite", batch)]) * batch
    for name in ("sqlite", "pg1", "pg2"):
        fs = runs[(name, batch)]
        if not fs:
            continue
        events = sum(float(f["rps"]) for f in fs) * batch
        p50 = max(float(f["p50_ms"]) for f in fs)
        p99 = max(float(f["p99_ms"]) for f in fs)
        errors = sum(int(f["errors"]) + int(f["non2xx"]) for f in fs)
        stored = events * float(fs[0]["seconds"])
        daemon_s, server_s = cpu.get((name, batch), (0, 0))
        server = f"{server_s * 1e6 / stored:>12.1f}" if name != "sqlite" else f"{'':>12}"
        print(f"{names[name]:<28} {batch:>10} {events:>10.0f} {events / base:>8.2f}x {p50:>8.2f} {p99:>8.2f} {errors:>6} {daemon_s * 1e6 / stored:>12.1f} {server}")
print()
for line in open(sys.argv[2]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:])
    stored, size = int(fields["stored"]), int(fields["bytes"] or 0)
    print(f"{names[parts[0]]}, {fields['batch']} events/request: {stored} events stored, {size / max(stored, 1):.0f} bytes an event in PostgreSQL (tables and indexes)")
PY
[ -s "$WORK/resolves" ] && python3 - "$WORK/resolves" "$DURATION" <<'PY'
import sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    parts = line.split()
    fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    runs[(parts[0], int(fields["conns"]))].append(fields)
print(f"\nPOST /v1/resolve, SQLite against two daemons on PostgreSQL, same run ({sys.argv[2]} s a scenario)")
print(f"{'store':<28} {'conns':>5} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'p99 vs SQLite':>13}")
names = {"sqlite": "SQLite, one daemon", "pg2": "PostgreSQL, two daemons"}
for conns in (1, 64):
    base = max((float(f["p99_ms"]) for f in runs[("sqlite", conns)]), default=0)
    for name in ("sqlite", "pg2"):
        fs = runs[(name, conns)]
        if not fs:
            continue
        p99 = max(float(f["p99_ms"]) for f in fs)
        errors = sum(int(f["errors"]) + int(f["non2xx"]) for f in fs)
        ratio = f"{p99 / base:>12.2f}x" if base else ""
        print(f"{names[name]:<28} {conns:>5} {sum(float(f['rps']) for f in fs):>8.0f} {max(float(f['p50_ms']) for f in fs):>8.2f} {p99:>8.2f} {errors:>6} {ratio:>13}")
PY
[ -s "$WORK/stats" ] && cat "$WORK/stats"
[ -s "$WORK/copy" ] && cat "$WORK/copy"
exit 0

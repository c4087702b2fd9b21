# Shared set-up of the benchmarks that work on a data directory (stats, export, dashboard).
# Sourced by them, not run. Expects KEEP (a data directory to reuse, or empty) to be set.

# bench_prepare NAME [build|test]: installs what is missing (sqlite3 for the size and baseline
# queries, the build or test dependencies), builds the release binary, and sets BIN, DATA (KEEP,
# or a new temporary directory), LP_PID and an exit trap that stops the daemon and removes DATA
# (unless kept) and every path in EXTRA_CLEANUP. With BENCH_BIN set (a release build of another
# commit, for an A/B on the same KEEP directory), that binary runs and nothing is built.
bench_prepare() {
  command -v sqlite3 >/dev/null || {
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq sqlite3 >/dev/null
  }
  ops/install-deps.sh "${2:-build}"
  if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$BENCH_BIN
  else
    swift build -c release --product linkpulse >/dev/null
    BIN=.build/release/linkpulse
  fi
  DATA=${KEEP:-$(mktemp -d "/tmp/linkpulse-$1-bench.XXXXXX")}
  LP_PID=""
  EXTRA_CLEANUP=()
  trap bench_cleanup EXIT
}

# bench_stored_events FILE: how many events an events database holds, those still in event_rows
# and those sealed into blocks (the sqlite3 shell reads both tables, not the events view, which
# needs linkpulse's event_archive table).
bench_stored_events() {
  if [ "$(sqlite3 "$1" "SELECT count(*) FROM sqlite_schema WHERE name = 'event_blocks'")" = 0 ]; then
    sqlite3 "$1" "SELECT count(*) FROM event_rows"   # a database from before sealed blocks
  else
    sqlite3 "$1" "SELECT (SELECT count(*) FROM event_rows) + (SELECT coalesce(sum(row_count), 0) FROM event_blocks)"
  fi
}

# bench_need COMMAND:PACKAGE…: installs the Debian package of each command that is missing.
bench_need() {
  local need=() pair
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}"); done
  [ ${#need[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
}

# bench_need_wrk: installs wrk (the load generator) when it is missing.
bench_need_wrk() { bench_need wrk:wrk; }

# The keys every bench daemon takes by flag (see bench_serve).
INGEST_KEY=${INGEST_KEY:-lpi_bench_ingest_key}
READ_KEY=${READ_KEY:-lpr_bench_read_key}

bench_cleanup() {
  [ -n "$LP_PID" ] && kill "$LP_PID" 2>/dev/null && wait "$LP_PID" 2>/dev/null || true
  [ -z "$KEEP" ] && rm -rf "$DATA"
  [ ${#EXTRA_CLEANUP[@]} -gt 0 ] && rm -rf "${EXTRA_CLEANUP[@]}"
  return 0
}

# bench_serve PORT [ARGS...]: starts `linkpulse serve` on DATA (with ARGS, then the words of
# LP_SERVE_ARGS when set, e.g. LP_SERVE_ARGS="--log-level debug"), waits until it answers,
# sets LP_PID. The daemon takes the bench's keys by flag (INGEST_KEY, READ_KEY), which every
# build a bench compares accepts.
bench_serve() {
  local port=$1; shift
  # A daemon left by an earlier run would answer in this one's place (and hold DATA's lock).
  if curl -s -o /dev/null "http://127.0.0.1:$port/healthz"; then
    echo "port $port already answers: stop the daemon left there by an earlier run first" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  $BIN serve --data-dir "$DATA" --port "$port" --log-level warning --ingest-key "$INGEST_KEY" --read-key "$READ_KEY" \
    "$@" ${LP_SERVE_ARGS:-} &
  LP_PID=$!
  for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.5; done
}

# bench_batched_rate FILE: events a second of a wrk run of 100-event batches, from the RESULT
# line wrk_common.lua prints.
bench_batched_rate() {
  awk '/^RESULT/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "rps") printf "%.0f", kv[2] * 100 } }' "$1"
}

# bench_paced_seconds PORT: how long the daemon on PORT held commits for --ingest-pacing
# (linkpulse_ingest_paced_seconds_total from /metrics; 0 when pacing is off or never held).
bench_paced_seconds() {
  local paced
  paced=$(curl -sf "http://127.0.0.1:$1/metrics" | awk '/^linkpulse_ingest_paced_seconds_total/ {print $2}')
  echo "${paced:-0}"
}

#!/usr/bin/env bash
# How long the README's first command takes to a listening daemon when nothing changed: the
# time from launching `ops/serve.sh` to `/healthz` answering, on a checkout already built once.
# Printed beside it, from the same run: the no-op `swift build` inside it, and the start after a
# test build (`swift build --build-tests`, as `ops/test.sh` leaves the checkout), which makes
# SwiftPM recompile the build plugins it shares between debug and release.
#
# Usage: ops/bench/serve-start.sh [--starts K]   (default 3 of each; the median is printed)
set -euo pipefail
cd "$(dirname "$0")/../.."

STARTS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --starts) STARTS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

PORT=18098
DATA=$(mktemp -d /tmp/linkpulse-serve-start.XXXXXX)
trap 'pkill -f "linkpulse serve --port $PORT" 2>/dev/null || true; rm -rf "$DATA"' EXIT

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one_start: seconds from launching ops/serve.sh to /healthz answering, then a clean stop.
one_start() {
  local start end pid
  start=$(now)
  ops/serve.sh --port "$PORT" --data-dir "$DATA" >"$DATA/serve.log" 2>&1 &
  pid=$!
  until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$DATA/serve.log" >&2; exit 1; }
    sleep 0.05
  done
  end=$(now)
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  printf '%.2f\n' "$(echo "$end - $start" | bc)"
}

echo "first start (builds what is missing): $(one_start) s"
noop=(); second=(); after_tests=()
for _ in $(seq "$STARTS"); do
  start=$(now); swift build -c release --product linkpulse >/dev/null; noop+=("$(printf '%.2f' "$(echo "$(now) - $start" | bc)")")
  second+=("$(one_start)")
done
for _ in $(seq "$STARTS"); do
  swift build --build-tests >/dev/null
  after_tests+=("$(one_start)")
done
echo "no-op release build:               median $(printf '%s\n' "${noop[@]}" | median) s  (${noop[*]})"
echo "start with nothing changed:        median $(printf '%s\n' "${second[@]}" | median) s  (${second[*]})"
echo "start right after a test build:    median $(printf '%s\n' "${after_tests[@]}" | median) s  (${after_tests[*]})"

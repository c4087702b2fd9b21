#!/usr/bin/env bash
# Makes docs/dashboard.png, the README's screenshot: the real dashboard of `serve --demo`, in
# headless Chromium. Usage: ops/screenshot.sh [OUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-docs/dashboard.png}
ops/install-deps.sh test
swift build -c release --product linkpulse >/dev/null
DATA=$(mktemp -d /tmp/linkpulse-screenshot.XXXXXX)
LOG="$DATA/serve.log"
PORT=18095
.build/release/linkpulse serve --demo --data-dir "$DATA" --port $PORT --log-level warning >"$LOG" 2>&1 &
LP_PID=$!
trap 'kill $LP_PID 2>/dev/null; wait $LP_PID 2>/dev/null; rm -rf "$DATA"' EXIT
for _ in $(seq 600); do grep -q "/dashboard/#key=" "$LOG" && break; sleep 0.5; done
KEY=$(grep -o "/dashboard/#key=[a-z0-9_]*" "$LOG" | cut -d= -f2)
# The demo's month, in UTC; the key in the fragment signs the browser in.
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1440,1700 \
  --virtual-time-budget=10000 --screenshot="$OUT" "http://127.0.0.1:$PORT/dashboard/?range=30d&tz=UTC#key=$KEY" 2>/dev/null
echo "wrote $OUT"

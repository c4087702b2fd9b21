#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the release binary, and starts
# `linkpulse serve` (SQLite and keys under ./data, no configuration). Extra arguments go to
# `serve`, for example: ops/serve.sh --port 9090
set -euo pipefail
cd "$(dirname "$0")/.."
ops/install-deps.sh build
swift build -c release --product linkpulse
exec .build/release/linkpulse serve "$@"

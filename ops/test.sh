#!/usr/bin/env bash
# The README's second command: installs what is missing, then runs the whole test suite
# (unit tests, HTTP tests through the real router, and crash tests of the real binary).
set -euo pipefail
cd "$(dirname "$0")/.."
ops/install-deps.sh test
swift build --build-tests
swift test --skip-build

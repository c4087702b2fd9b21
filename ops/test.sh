#!/usr/bin/env bash
# The README's second command: installs what is missing, then runs the whole test suite
# (unit tests, HTTP tests through the real router, and crash tests of the real binary).
set -euo pipefail
cd "$(dirname "$0")/.."
ops/install-deps.sh test
swift build --build-tests
# Swift Testing starts every test at once by default; on two cores the daemons, browsers and
# clusters the tests start then starve each other's timers for the first minutes. At most six
# tests at a time keeps each one's timing close to what it is alone.
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-6} swift test --skip-build
